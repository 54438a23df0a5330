// Webhook triggers (issue 11, "Webhook triggers"): CRUD of triggers, and the delivery of a forge's push to
// POST /hooks/{token}, which launches the trigger's target, as its owner, of exactly the pushed commit.
import crypto from 'node:crypto';
import {
  type EffectiveTriggerFilters,
  effectiveTriggerFilters,
  type HookReply,
  type LaunchTarget,
  type Trigger,
  type TriggerCreateBody,
  type TriggerUpdateBody,
  type TriggerWithSecret,
} from '@baton/contracts';
import {
  type AuditRepo,
  DuplicateKeyError,
  type GrantRepo,
  type LaunchRefRepo,
  type PageQuery,
  type ProjectRepo,
  type TriggerPatch,
  type TriggerRepo,
  type TriggerRow,
  type UserRepo,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { type Authorizer, grantCreatorManage, notFound, type Principal, principalOf } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import {
  BatonError,
  ConflictError,
  type FieldError,
  ForbiddenError,
  NotFoundError,
  UnauthenticatedError,
  UnprocessableError,
  ValidationError,
} from '../common/errors.js';
import { newId } from '../common/ids.js';
import { type Page, toPage, visiblePageQuery } from '../common/paging.js';
import { type Keyring, openSealedJson } from '../crypto/secret-box.js';
import type { Launcher } from '../launching/launcher.js';
import { ENCRYPTED_PLACEHOLDER } from '../runs/run-launch.js';
import { type HookHeaders, verifyHookSignature } from './hook-signature.js';
import { classifyEvent, deliveryEvent, deliveryId, isPushedRepository, parsePush } from './push-event.js';
import { filteredOut } from './ref-filter.js';

export * from './hook-signature.js';
export * from './push-event.js';
export * from './ref-filter.js';

/** The hook path's token: 32 random bytes, base64url (43 characters). Anything else is unknown at once. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
/** Longest delivery id kept for replay protection (forges send UUIDs). */
const MAX_DELIVERY_ID = 200;
/** Who the audit trail names for what a forge's delivery did. */
const WEBHOOK_ACTOR = 'webhook';

const randomSecret = () => crypto.randomBytes(32).toString('base64url');

/** A delivery as the HTTP layer hands it over: headers (lower-case names) and the raw body bytes. */
export interface HookDelivery {
  headers: HookHeaders;
  body: Buffer;
}

type TxRepos = {
  triggers: Pick<TriggerRepo, 'insert' | 'update' | 'delete'>;
  grants: Pick<GrantRepo, 'insert' | 'deleteMentioning'>;
  audit: Pick<AuditRepo, 'append'>;
  launchRefs: Pick<LaunchRefRepo, 'replace' | 'deleteOwner'>;
};

export interface TriggerServiceDeps {
  triggers: Pick<
    TriggerRepo,
    | 'findById'
    | 'findByToken'
    | 'list'
    | 'update'
    | 'claimDelivery'
    | 'findDelivery'
    | 'setDeliveryRun'
    | 'releaseDelivery'
  >;
  users: Pick<UserRepo, 'findById'>;
  projects: Pick<ProjectRepo, 'findById'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireCreator' | 'requireVisible' | 'visibleIds' | 'levelOn'>;
  clock: Clock;
  keyring: Pick<Keyring, 'encrypt' | 'decrypt'>;
  launcher: Pick<Launcher, 'launch' | 'splitSecrets' | 'joinSecrets' | 'projectIds' | 'referencedIds'>;
  /** BATON_PUBLIC_URL without a trailing slash */
  publicUrl: string;
}

const targetOf = (row: TriggerRow): LaunchTarget => row.target as LaunchTarget;
const filtersOf = (row: TriggerRow): EffectiveTriggerFilters => row.filters as EffectiveTriggerFilters;

/** Where a launch target's own field errors sit in a trigger's body. */
function targetField(target: LaunchTarget): string {
  return target.run ? 'body.target.run' : target.pipeline ? 'body.target.pipeline' : 'body.target';
}

/** The error of validating `target` with its field paths moved under `body.target…`. */
function atTarget(target: LaunchTarget, err: unknown): unknown {
  if (!(err instanceof ValidationError || err instanceof UnprocessableError)) return err;
  const base = targetField(target);
  const errors: FieldError[] = err.errors.map((e) => ({
    ...e,
    path: e.path === 'body' ? base : e.path.startsWith('body.') ? `${base}.${e.path.slice(5)}` : e.path,
  }));
  const Cls = err instanceof ValidationError ? ValidationError : UnprocessableError;
  const moved = new Cls(err.message, errors);
  moved.stack = err.stack;
  return moved;
}

export function createTriggerService(deps: TriggerServiceDeps) {
  const hookUrl = (token: string) => `${deps.publicUrl}/hooks/${token}`;

  async function visible(p: Principal, id: string, need: 'use' | 'manage'): Promise<TriggerRow> {
    return deps.authz.requireVisible(p, need, { kind: 'trigger', id, row: await deps.triggers.findById(id) });
  }

  function sealedSecrets(row: Pick<TriggerRow, 'target_secrets_enc'>): Record<string, string> | null {
    if (row.target_secrets_enc === null) return null;
    return openSealedJson<Record<string, string>>(deps.keyring, row.target_secrets_enc);
  }

  /** The trigger as answered: password answers masked, the hook URL only for those who manage it. */
  function view(row: TriggerRow, manages: boolean): Trigger {
    const target = targetOf(row);
    const secrets = sealedSecrets(row);
    const shown: LaunchTarget = secrets
      ? {
          ...target,
          survey_answers: {
            ...target.survey_answers,
            ...Object.fromEntries(Object.keys(secrets).map((k) => [k, ENCRYPTED_PLACEHOLDER])),
          },
        }
      : target;
    return {
      id: row.id,
      name: row.name,
      target: shown,
      require_signature: row.require_signature === 1,
      filters: filtersOf(row),
      hook_url: manages ? hookUrl(row.token) : null,
      template_id: row.template_id,
      last_delivery_at: row.last_delivery_at,
      last_run_id: row.last_run_id,
      created_by: row.created_by,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  const manages = async (p: Principal, id: string) => (await deps.authz.levelOn(p, id)) === 'manage';

  /**
   * Checks that `p` may launch `target` (every object it names exists and is usable, every playbook exists) and
   * that it runs a project's playbook: a trigger runs the pushed commit of that project.
   */
  async function checkTarget(p: Principal, target: LaunchTarget): Promise<void> {
    try {
      await deps.launcher.launch(p, target, { origin: 'trigger', validateOnly: true });
    } catch (err) {
      throw atTarget(target, err);
    }
    if ((await deps.launcher.projectIds(p, target)).length === 0) {
      const message = 'a trigger runs the pushed commit of a project: its target must run a playbook of a project';
      throw new ValidationError(message, [{ path: 'body.target', message }]);
    }
  }

  /** The owner, whose authority a retargeted trigger launches with, must be able to launch the new target too. */
  async function checkTargetAsOwner(p: Principal, row: TriggerRow, target: LaunchTarget): Promise<void> {
    if (row.created_by === p.id) return;
    const owner = await ownerOf(row);
    try {
      await deps.launcher.launch(owner, target, { origin: 'trigger', validateOnly: true });
    } catch (err) {
      if (!(err instanceof BatonError)) throw err;
      throw new ConflictError(
        `trigger ${row.id} launches as its owner ${owner.username}, who cannot launch this target: ${err.message}`,
      );
    }
  }

  /** A target as stored: password answers sealed apart; a kept `$encrypted$` answer keeps its sealed value. */
  async function stored(
    p: Principal,
    target: LaunchTarget,
    previous: Record<string, string> | null,
  ): Promise<{ target: LaunchTarget; secrets: Record<string, string> | null; secretsEnc: string | null }> {
    const split = await deps.launcher.splitSecrets(p, target);
    const secrets: Record<string, string> = {};
    for (const [k, v] of Object.entries(split.secrets ?? {})) {
      if (v !== ENCRYPTED_PLACEHOLDER) secrets[k] = v;
      else if (previous?.[k] !== undefined) secrets[k] = previous[k];
      else {
        const message = `${ENCRYPTED_PLACEHOLDER} keeps a stored password answer, but ${k} has none`;
        throw new ValidationError(message, [{ path: `body.target.survey_answers.${k}`, message }]);
      }
    }
    const any = Object.keys(secrets).length > 0;
    return {
      target: split.target,
      secrets: any ? secrets : null,
      secretsEnc: any ? deps.keyring.encrypt(JSON.stringify(secrets)) : null,
    };
  }

  async function unique<T>(name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof DuplicateKeyError && !err.columns.includes('token'))
        throw new ConflictError(`a trigger named ${name} already exists`);
      throw err;
    }
  }

  /** The trigger's owner as a principal: pushes launch with their grants. */
  async function ownerOf(row: TriggerRow): Promise<Principal> {
    const owner = await principalOf(deps.users, row.created_by);
    if (!owner)
      throw new ConflictError(
        `trigger ${row.id} launches as its owner ${row.created_by}, who no longer exists; recreate the trigger`,
      );
    return owner;
  }

  async function audit(action: string, object: string, summary: string, actor = WEBHOOK_ACTOR): Promise<void> {
    await deps.transaction((r) => recordAudit(r.audit, { actor, action, object, summary }, deps.clock));
  }

  /** A failed launch as the hook's answer: 409 stays, everything the owner or the target lacks is a 422. */
  function launchFailure(row: TriggerRow, owner: string, err: unknown): unknown {
    if (!(err instanceof BatonError)) return err;
    const message = `trigger ${row.id} could not launch its target as ${owner}: ${err.message}`;
    if (err instanceof ConflictError) return new ConflictError(message);
    if (
      err instanceof ValidationError ||
      err instanceof UnprocessableError ||
      err instanceof NotFoundError ||
      err instanceof ForbiddenError
    )
      return new UnprocessableError(message);
    return err;
  }

  return {
    /** Creates a trigger; the answer is the only one (with rotate-secret's) that carries the signing secret. */
    async create(p: Principal, body: TriggerCreateBody): Promise<TriggerWithSecret> {
      deps.authz.requireCreator(p);
      await checkTarget(p, body.target);
      const { target, secretsEnc } = await stored(p, body.target, null);
      const now = deps.clock();
      const at = iso(now);
      const token = randomSecret();
      const secret = randomSecret();
      const row: TriggerRow = {
        id: newId('trg', now.getTime()),
        name: body.name,
        token,
        secret_enc: deps.keyring.encrypt(secret),
        require_signature: body.require_signature ? 1 : 0,
        filters: effectiveTriggerFilters(body.filters),
        target,
        target_secrets_enc: secretsEnc,
        template_id: body.target.template_id ?? null,
        last_delivery_at: null,
        last_run_id: null,
        created_by: p.id,
        created_at: at,
        updated_at: at,
      };
      await unique(body.name, () =>
        deps.transaction(async (r) => {
          await r.triggers.insert(row);
          await grantCreatorManage(r.grants, p, row.id, now);
          await r.launchRefs.replace(row.id, deps.launcher.referencedIds(body.target));
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'trigger.create',
              object: row.id,
              summary: `created trigger ${row.name} (signature ${body.require_signature ? 'required' : 'not required'})`,
            },
            deps.clock,
          );
        }),
      );
      return { ...view(row, true), token, hook_url: hookUrl(token), secret };
    },

    /** Admins see every trigger; others those they hold a grant on. */
    async list(p: Principal, page: PageQuery & { cursor?: string | undefined }): Promise<Page<Trigger>> {
      const rows = await deps.triggers.list(visiblePageQuery(page, await deps.authz.visibleIds(p, 'trg')));
      const result = toPage(rows, page.limit, (x) => x.id);
      const items: Trigger[] = [];
      for (const row of result.items) items.push(view(row, await manages(p, row.id)));
      return { items, next: result.next };
    },

    async get(p: Principal, id: string): Promise<Trigger> {
      const row = await visible(p, id, 'use');
      return view(row, await manages(p, id));
    },

    /** Renames, retargets, changes the filters or toggles require_signature (needs manage). */
    async update(p: Principal, id: string, body: TriggerUpdateBody): Promise<Trigger> {
      const row = await visible(p, id, 'manage');
      const patch: TriggerPatch = { updated_at: iso(deps.clock()) };
      const changed: string[] = [];
      if (body.name !== undefined && body.name !== row.name) {
        patch.name = body.name;
        changed.push('name');
      }
      if (body.require_signature !== undefined && (body.require_signature ? 1 : 0) !== row.require_signature) {
        patch.require_signature = body.require_signature ? 1 : 0;
        changed.push(`require_signature (now ${body.require_signature})`);
      }
      if (body.filters !== undefined) {
        patch.filters = effectiveTriggerFilters(body.filters);
        changed.push('filters');
      }
      let refs: string[] | undefined;
      if (body.target !== undefined) {
        const previous = sealedSecrets(row);
        const next = await stored(p, body.target, previous);
        const launchable = deps.launcher.joinSecrets(next.target, next.secrets);
        await checkTarget(p, launchable);
        await checkTargetAsOwner(p, row, launchable);
        patch.target = next.target;
        patch.target_secrets_enc = next.secretsEnc;
        patch.template_id = body.target.template_id ?? null;
        refs = deps.launcher.referencedIds(body.target);
        changed.push('target');
      }
      const name = patch.name ?? row.name;
      await unique(name, () =>
        deps.transaction(async (r) => {
          if (!(await r.triggers.update(id, patch))) throw notFound('trigger', id);
          if (refs) await r.launchRefs.replace(id, refs);
          const what = changed.length ? `changed ${changed.join(', ')}` : 'no field changed';
          await recordAudit(
            r.audit,
            { actor: p.id, action: 'trigger.update', object: id, summary: `updated trigger ${name}: ${what}` },
            deps.clock,
          );
        }),
      );
      return view({ ...row, ...patch }, true);
    },

    /** Deletes the trigger, its grants and its delivery records: its hook URL answers 404 from now on. */
    async remove(p: Principal, id: string): Promise<void> {
      const row = await visible(p, id, 'manage');
      await deps.transaction(async (r) => {
        await r.grants.deleteMentioning(id);
        await r.launchRefs.deleteOwner(id);
        if (!(await r.triggers.delete(id))) throw notFound('trigger', id);
        await recordAudit(
          r.audit,
          { actor: p.id, action: 'trigger.delete', object: id, summary: `deleted trigger ${row.name}` },
          deps.clock,
        );
      });
    },

    /** A new signing secret, shown once; the old one stops working at once. The hook URL stays. */
    async rotateSecret(p: Principal, id: string): Promise<TriggerWithSecret> {
      const row = await visible(p, id, 'manage');
      const secret = randomSecret();
      const patch: TriggerPatch = { secret_enc: deps.keyring.encrypt(secret), updated_at: iso(deps.clock()) };
      await deps.transaction(async (r) => {
        if (!(await r.triggers.update(id, patch))) throw notFound('trigger', id);
        await recordAudit(
          r.audit,
          {
            actor: p.id,
            action: 'trigger.rotate_secret',
            object: id,
            summary: `rotated the signing secret of trigger ${row.name}`,
          },
          deps.clock,
        );
      });
      return { ...view({ ...row, ...patch }, true), token: row.token, hook_url: hookUrl(row.token), secret };
    },

    /**
     * A forge's delivery to /hooks/{token}. The signature first (over the raw bytes, constant time), then the
     * payload: a push of a branch or tag the filters accept, of the target's repository, fires once per delivery id.
     * Answers the 202 body; refusals are thrown (404 unknown token, 401 signature, 400 payload, 422/409 launch).
     */
    async deliver(token: string, delivery: HookDelivery): Promise<HookReply> {
      const unknown = () => new NotFoundError('no trigger at this hook address');
      if (!TOKEN.test(token)) throw unknown();
      const row = await deps.triggers.findByToken(token);
      if (!row) throw unknown();

      if (row.require_signature === 1) {
        const secret = deps.keyring.decrypt(row.secret_enc).toString('utf8');
        const verdict = verifyHookSignature(delivery.headers, delivery.body, secret);
        if (!verdict.ok) {
          const id = deliveryId(delivery.headers);
          const idWords = id !== undefined && id.length <= MAX_DELIVERY_ID ? ` (delivery ${id})` : '';
          await audit(
            'trigger.signature_refused',
            row.id,
            `refused a delivery to trigger ${row.name}${idWords}: ${verdict.scheme === null ? 'unsigned' : `bad ${verdict.scheme} signature`}`,
          );
          throw new UnauthenticatedError(verdict.reason);
        }
      }

      const payload = parsePayload(delivery);
      const at = iso(deps.clock());
      await deps.triggers.update(row.id, { last_delivery_at: at });

      const event = deliveryEvent(delivery.headers);
      const eventClass = classifyEvent(event);
      if (eventClass === 'ping') return { fired: false, reason: 'ping: the hook reaches Baton' };
      if (eventClass === 'other')
        return { fired: false, reason: `${event} events do not fire triggers; only pushes do` };

      const push = parsePush(payload);
      if ('field' in push)
        throw new ValidationError(`not a push payload: ${push.message}`, [{ path: push.field, message: push.message }]);
      const skipped = filteredOut(push, filtersOf(row));
      if (skipped) return { fired: false, reason: skipped };

      const owner = await ownerOf(row).catch(async (err: unknown) => {
        await audit('trigger.fire_failed', row.id, `trigger ${row.name} did not fire for ${push.ref}: owner gone`);
        throw err;
      });
      const target = deps.launcher.joinSecrets(targetOf(row), sealedSecrets(row));
      await checkRepository(row, owner, target, push);

      const id = deliveryId(delivery.headers);
      if (id !== undefined && id.length > MAX_DELIVERY_ID) {
        const message = `at most ${MAX_DELIVERY_ID} characters`;
        throw new ValidationError(`the delivery id is too long`, [{ path: 'header.delivery', message }]);
      }
      if (
        id !== undefined &&
        !(await deps.triggers.claimDelivery({ trigger_id: row.id, delivery_id: id, received_at: at, run_id: null }))
      ) {
        const seen = await deps.triggers.findDelivery(row.id, id);
        return { fired: false, reason: 'duplicate delivery', run_id: seen?.run_id ?? null };
      }

      let runId: string;
      try {
        const run = await deps.launcher.launch(owner, target, {
          origin: 'trigger',
          triggerId: row.id,
          ref: push.commit,
        });
        runId = run.id;
      } catch (err) {
        // The delivery did not fire: the forge's redelivery of it may try again.
        if (id !== undefined) await deps.triggers.releaseDelivery(row.id, id);
        const failure = launchFailure(row, owner.username, err);
        if (failure instanceof BatonError)
          await audit(
            'trigger.fire_failed',
            row.id,
            `trigger ${row.name} did not fire for ${push.ref} at ${push.commit}: ${failure.message}`,
          );
        throw failure;
      }
      if (id !== undefined) await deps.triggers.setDeliveryRun(row.id, id, runId);
      await deps.triggers.update(row.id, { last_run_id: runId });
      return { fired: true, run_id: runId };
    },
  };

  /** Every project the target runs must be the pushed repository (by URL or full name), else 422. */
  async function checkRepository(
    row: TriggerRow,
    owner: Principal,
    target: LaunchTarget,
    push: Exclude<ReturnType<typeof parsePush>, { field: string }>,
  ): Promise<void> {
    let ids: string[];
    try {
      ids = await deps.launcher.projectIds(owner, target);
    } catch (err) {
      const failure = launchFailure(row, owner.username, err);
      if (failure instanceof BatonError)
        await audit(
          'trigger.fire_failed',
          row.id,
          `trigger ${row.name} did not fire for ${push.ref}: ${failure.message}`,
        );
      throw failure;
    }
    const pushed = push.repository.fullName ?? push.repository.urls[0] ?? 'an unnamed repository';
    for (const projectId of ids) {
      const project = await deps.projects.findById(projectId);
      if (!project) {
        const failure = new UnprocessableError(`trigger ${row.id} runs project ${projectId}, which no longer exists`);
        await audit(
          'trigger.fire_failed',
          row.id,
          `trigger ${row.name} did not fire for ${push.ref}: ${failure.message}`,
        );
        throw failure;
      }
      if (!isPushedRepository(project.git_url, push.repository)) {
        const message = `the push is to ${pushed}, but trigger ${row.id} runs project ${project.name} (${project.git_url})`;
        throw new UnprocessableError(message, [{ path: 'body.repository', message }]);
      }
    }
  }
}
export type TriggerService = ReturnType<typeof createTriggerService>;

/** The delivery's JSON: the body itself, or the `payload` field of a form-encoded one (GitHub's other content type). */
function parsePayload(delivery: HookDelivery): unknown {
  const notJson = (message: string) =>
    new ValidationError(`the delivery is not JSON: ${message}`, [{ path: 'body', message }]);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(delivery.body);
  } catch {
    throw notJson('the body is not UTF-8');
  }
  const type = String(delivery.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('application/x-www-form-urlencoded')) {
    const form = new URLSearchParams(text).get('payload');
    if (form === null) throw notJson('a form-encoded delivery carries its JSON in the payload field');
    text = form;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw notJson('the body is not valid JSON');
  }
}
