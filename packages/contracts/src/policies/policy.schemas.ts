// Approval policies (issue 12): which runs wait for whose approval.
import { z } from 'zod';
import { idOf, NO_CONTROL_CHARACTERS, ObjectName, Timestamp } from '../common/common.schemas.js';
import { RunOrigin, WorkerLabel } from '../runs/run.schemas.js';
import { Role } from '../users/user.schemas.js';

export const MIN_POLICY_EXPIRY_S = 60;
export const MAX_POLICY_EXPIRY_S = 30 * 24 * 3600;
export const MAX_APPROVALS = 10;

/** A glob on playbook paths or host names: `*` any characters but `/`, `**` any characters, `?` one character. */
const Glob = z.string().min(1).max(512).regex(NO_CONTROL_CHARACTERS, 'must not contain control characters');
const list = <T extends z.ZodType>(item: T, what: string) =>
  z.array(item).min(1, `give at least one ${what}, or leave the field out`).max(100);

export const PolicyMatch = z
  .strictObject({
    projects: list(idOf('prj'), 'project').optional(),
    templates: list(idOf('tpl'), 'template').optional(),
    inventories: list(idOf('inv'), 'inventory').optional(),
    playbooks: list(Glob, 'glob')
      .optional()
      .meta({ description: 'globs on the playbook path (project runs; an inline playbook is `(inline)`)' }),
    hosts: list(Glob, 'glob')
      .optional()
      .meta({ description: 'globs on host names: holds when any host the run targets (after limit) matches' }),
    check: z.boolean().optional().meta({ description: 'true: dry runs only; false: real runs only' }),
    origins: list(RunOrigin, 'origin').optional(),
    submitted_by_roles: list(Role, 'role').optional(),
    labels: list(WorkerLabel, 'label')
      .optional()
      .meta({ description: 'holds when the run asks for any of these worker labels' }),
  })
  .meta({
    id: 'PolicyMatch',
    description:
      'Every given field must hold (a list holds when any of its items does); an empty match holds for every run.',
  });
export type PolicyMatch = z.infer<typeof PolicyMatch>;

export const PolicyApprovers = z
  .strictObject({
    roles: list(Role, 'role').optional(),
    users: list(idOf('usr'), 'user').optional(),
    teams: list(idOf('team'), 'team').optional(),
  })
  .meta({
    id: 'PolicyApprovers',
    description: 'who may decide: users, members of teams, holders of roles; admins may always decide',
  });
export type PolicyApprovers = z.infer<typeof PolicyApprovers>;

const Description = z.string().max(2000).optional();
const MinApprovals = z.number().int().min(1).max(MAX_APPROVALS);
const ExpiresAfter = z
  .number()
  .int()
  .min(MIN_POLICY_EXPIRY_S)
  .max(MAX_POLICY_EXPIRY_S)
  .meta({ description: 'a run held longer than this (seconds) finishes `rejected` with reason `expired`' });

export const PolicyCreateBody = z.strictObject({
  name: ObjectName,
  description: Description,
  enabled: z.boolean().default(true),
  match: PolicyMatch.default({}),
  approvers: PolicyApprovers.default({}),
  min_approvals: MinApprovals.default(1),
  expires_after_s: ExpiresAfter.optional(),
});
export type PolicyCreateBody = z.infer<typeof PolicyCreateBody>;

/** Every field optional: what is given replaces the stored value (`expires_after_s: null` removes the expiry). */
export const PolicyUpdateBody = z
  .strictObject({
    name: ObjectName.optional(),
    description: z.string().max(2000).nullable().optional(),
    enabled: z.boolean().optional(),
    match: PolicyMatch.optional(),
    approvers: PolicyApprovers.optional(),
    min_approvals: MinApprovals.optional(),
    expires_after_s: ExpiresAfter.nullable().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one field to change');
export type PolicyUpdateBody = z.infer<typeof PolicyUpdateBody>;

export const Policy = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    enabled: z.boolean(),
    match: PolicyMatch,
    approvers: PolicyApprovers,
    min_approvals: z.number().int(),
    expires_after_s: z.number().int().nullable(),
    created_by: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Policy' });
export type Policy = z.infer<typeof Policy>;

export const PolicyIdParams = z.strictObject({ id: idOf('pol') });
