// Webhook triggers (issue 11, "Webhook triggers"): a git push to a forge (GitHub, Gitea, GitLab, or anything that
// posts a GitHub-shaped payload) launches a target, of exactly the pushed commit.
import { z } from 'zod';
import { idOf, NO_CONTROL_CHARACTERS, ObjectName, Timestamp } from '../common/common.schemas.js';
import { LaunchTarget } from '../launching/launch-target.schemas.js';

/**
 * What a delivery is, whichever forge sent it: `push` is a push to a branch (`refs/heads/…`), `tag_push` a push of a
 * tag (`refs/tags/…`; GitHub and Gitea send both as their `push` event, GitLab as `Tag Push Hook`).
 */
export const TRIGGER_EVENTS = ['push', 'tag_push'] as const;
export const TriggerEvent = z.enum(TRIGGER_EVENTS);
export type TriggerEvent = z.infer<typeof TriggerEvent>;

/** A glob over a branch or tag name: `*` any characters but `/`, `**` any characters, `?` one character but `/`. */
export const RefGlob = z
  .string()
  .min(1)
  .max(255)
  .regex(NO_CONTROL_CHARACTERS, 'must not contain control characters')
  .meta({ example: 'release/*' });

export const TriggerFilters = z
  .strictObject({
    events: z.array(TriggerEvent).min(1).max(TRIGGER_EVENTS.length).optional().meta({
      description:
        'which pushes fire: default ["push"] (branch pushes); ["tag_push"] when only `tags` is given, both when `branches` and `tags` are',
    }),
    branches: z
      .array(RefGlob)
      .min(1)
      .max(50)
      .optional()
      .meta({ description: 'branch globs (e.g. `main`, `release/*`); a branch push fires only when one matches' }),
    tags: z
      .array(RefGlob)
      .min(1)
      .max(50)
      .optional()
      .meta({ description: 'tag globs (e.g. `v*`); a tag push fires only when one matches' }),
  })
  .superRefine((f, ctx) => {
    if (!f.events) return;
    if (f.branches && !f.events.includes('push'))
      ctx.addIssue({
        code: 'custom',
        path: ['branches'],
        message: 'branches filter push events: add "push" to events',
      });
    if (f.tags && !f.events.includes('tag_push'))
      ctx.addIssue({
        code: 'custom',
        path: ['tags'],
        message: 'tags filter tag_push events: add "tag_push" to events',
      });
  })
  .meta({ id: 'TriggerFilters' });
export type TriggerFilters = z.infer<typeof TriggerFilters>;

/** Filters as stored and shown: the events always spelled out. */
export const EffectiveTriggerFilters = z
  .object({
    events: z.array(TriggerEvent),
    branches: z.array(z.string()).optional(),
    tags: z.array(z.string()).optional(),
  })
  .meta({ id: 'EffectiveTriggerFilters' });
export type EffectiveTriggerFilters = z.infer<typeof EffectiveTriggerFilters>;

/** The filters with their events defaulted (see TriggerFilters.events) and spelled in a fixed order. */
export function effectiveTriggerFilters(f: TriggerFilters | undefined): EffectiveTriggerFilters {
  const given = f ?? {};
  const events: TriggerEvent[] =
    given.events ?? (given.tags ? (given.branches ? ['push', 'tag_push'] : ['tag_push']) : ['push']);
  return {
    events: TRIGGER_EVENTS.filter((e) => events.includes(e)),
    ...(given.branches ? { branches: given.branches } : {}),
    ...(given.tags ? { tags: given.tags } : {}),
  };
}

const RequireSignature = z.boolean().meta({
  description:
    'refuse (401) deliveries without a valid signature: X-Hub-Signature-256, X-Gitea-Signature, X-Baton-Signature-256 (HMAC-SHA256 of the body) or X-Gitlab-Token',
});

export const TriggerCreateBody = z
  .strictObject({
    name: ObjectName,
    target: LaunchTarget,
    require_signature: RequireSignature.default(true),
    filters: TriggerFilters.optional(),
  })
  .meta({ id: 'TriggerCreateBody' });
export type TriggerCreateBody = z.infer<typeof TriggerCreateBody>;

export const TriggerUpdateBody = z
  .strictObject({
    name: ObjectName.optional(),
    target: LaunchTarget.optional(),
    require_signature: RequireSignature.optional(),
    filters: TriggerFilters.optional().meta({ description: 'replaces the filters; {} restores the defaults' }),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), {
    message: 'give at least one of name, target, require_signature, filters',
  })
  .meta({ id: 'TriggerUpdateBody' });
export type TriggerUpdateBody = z.infer<typeof TriggerUpdateBody>;

export const Trigger = z
  .object({
    id: z.string(),
    name: z.string(),
    // password answers of a template target show as "$encrypted$"
    target: LaunchTarget,
    require_signature: z.boolean(),
    filters: EffectiveTriggerFilters,
    hook_url: z.string().nullable().meta({
      description:
        'where the forge posts (BATON_PUBLIC_URL/hooks/<token>); shown to those who manage the trigger, else null',
    }),
    template_id: z.string().nullable(),
    last_delivery_at: Timestamp.nullable(),
    last_run_id: z.string().nullable(),
    created_by: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Trigger' });
export type Trigger = z.infer<typeof Trigger>;

/** The answer of create and rotate-secret: the only ones that carry the signing secret. */
export const TriggerWithSecret = Trigger.extend({
  token: z.string().meta({ description: 'the secret part of the hook path' }),
  hook_url: z.string(),
  secret: z.string().meta({ description: 'the signing secret, shown only now' }),
}).meta({ id: 'TriggerWithSecret' });
export type TriggerWithSecret = z.infer<typeof TriggerWithSecret>;

export const TriggerIdParams = z.strictObject({ id: idOf('trg') });

/** The answer of POST /hooks/{token} to an accepted delivery (202). */
export const HookReply = z
  .object({
    fired: z.boolean(),
    run_id: z.string().nullable().optional(),
    reason: z.string().optional(),
  })
  .meta({ id: 'HookReply' });
export type HookReply = z.infer<typeof HookReply>;
