// Notifiers (issue 17): CRUD with secrets sealed apart from the config, a test message, and the delivery log.
// Operators and admins create them; grants apply as to every object (the fan-out only tells a notifier about runs
// its owner may see).
import crypto from 'node:crypto';
import {
  type Delivery,
  EmailConfig,
  type Notifier,
  type NotifierCreateBody,
  type NotifierKind,
  type NotifierMatch,
  type NotifierUpdateBody,
  type NotifyEvent,
  SlackConfig,
  WebhookConfig,
} from '@baton/contracts';
import {
  type AuditRepo,
  type DeliveryRow,
  DuplicateKeyError,
  type GrantRepo,
  type NotifierRepo,
  type NotifierRow,
  type PageQuery,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { type Authorizer, grantCreatorManage, notFound, type Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, ValidationError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { type Page, toPage, visiblePageQuery } from '../common/paging.js';
import { type Keyring, openSealedJson } from '../crypto/secret-box.js';
import type { NotificationMessage } from './notify-transport.js';

type TxRepos = {
  notifiers: Pick<NotifierRepo, 'insert' | 'update' | 'delete' | 'insertDelivery'>;
  grants: Pick<GrantRepo, 'insert' | 'deleteMentioning'>;
  audit: Pick<AuditRepo, 'append'>;
};

export interface NotifierServiceDeps {
  notifiers: Pick<NotifierRepo, 'findById' | 'list' | 'all' | 'deliveriesOf' | 'findDelivery'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireCreator' | 'requireVisible' | 'visibleIds'>;
  keyring: Pick<Keyring, 'encrypt' | 'decrypt'>;
  clock: Clock;
}

type Secrets = Record<string, unknown>;
const CONFIG_SCHEMAS = { webhook: WebhookConfig, slack: SlackConfig, email: EmailConfig } as const;
const randomSecret = () => crypto.randomBytes(32).toString('base64url');

/** A checked config split into what is shown and what is sealed. */
function split(
  kind: NotifierKind,
  config: Record<string, unknown>,
): { shown: Record<string, unknown>; secrets: Secrets } {
  if (kind === 'webhook') {
    const { url, headers } = config as { url: string; headers?: Record<string, string> };
    return { shown: { url, header_names: Object.keys(headers ?? {}).sort() }, secrets: { headers: headers ?? {} } };
  }
  if (kind === 'slack') {
    const { url } = config as { url: string };
    // The whole URL is the credential; only its host says where messages go.
    return { shown: { host: new URL(url).host }, secrets: { url } };
  }
  const { password, ...rest } = config as { password?: string };
  return { shown: rest, secrets: password === undefined ? {} : { password } };
}

/** The secret field names a view lists. */
function secretFields(kind: NotifierKind, secrets: Secrets): string[] {
  if (kind === 'webhook')
    return ['secret', ...Object.keys((secrets.headers as object) ?? {}).map((h) => `headers.${h}`)];
  return Object.keys(secrets).sort();
}

/** A delivery due at once, not attempted yet: the one shape both the fan-out and a test message write. */
export function pendingDelivery(d: {
  notifierId: string;
  outboxId: string | null;
  event: string;
  runId: string | null;
  message: NotificationMessage & { recipients?: string[] };
  at: string;
}): DeliveryRow {
  return {
    id: newId('dlv', Date.parse(d.at)),
    notifier_id: d.notifierId,
    outbox_id: d.outboxId,
    event: d.event,
    run_id: d.runId,
    message: JSON.stringify(d.message),
    status: 'pending',
    attempts: 0,
    next_attempt_at: d.at,
    last_attempt_at: null,
    response_code: null,
    error: null,
    response_excerpt: null,
    claimed_by: null,
    lease_until: null,
    created_at: d.at,
  };
}

export function toDeliveryView(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    notifier_id: row.notifier_id,
    event: row.event as Delivery['event'],
    run_id: row.run_id,
    status: row.status as Delivery['status'],
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' || row.status === 'retrying' ? row.next_attempt_at : null,
    last_attempt_at: row.last_attempt_at,
    response_code: row.response_code,
    error: row.error,
    response_excerpt: row.response_excerpt,
    created_at: row.created_at,
  };
}

export function createNotifierService(deps: NotifierServiceDeps) {
  const open = (row: NotifierRow): Secrets => openSealedJson<Secrets>(deps.keyring, row.secrets_enc);
  const seal = (s: Secrets) => deps.keyring.encrypt(JSON.stringify(s));

  function view(row: NotifierRow, secrets: Secrets = open(row)): Notifier {
    return {
      id: row.id,
      name: row.name,
      kind: row.kind as NotifierKind,
      config: row.config,
      secret_fields: secretFields(row.kind as NotifierKind, secrets),
      events: row.events as NotifyEvent[],
      match: row.match as NotifierMatch | null,
      created_by: row.created_by,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  async function visible(p: Principal, id: string, need: 'use' | 'manage'): Promise<NotifierRow> {
    return deps.authz.requireVisible(p, need, { kind: 'notifier', id, row: await deps.notifiers.findById(id) });
  }

  async function unique<T>(name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof DuplicateKeyError) throw new ConflictError(`a notifier named ${name} already exists`);
      throw err;
    }
  }

  return {
    async create(p: Principal, body: NotifierCreateBody): Promise<Notifier & { secret?: string }> {
      deps.authz.requireCreator(p);
      const { shown, secrets } = split(body.kind, body.config as Record<string, unknown>);
      const signing = body.kind === 'webhook' ? randomSecret() : undefined;
      const allSecrets = signing ? { ...secrets, secret: signing } : secrets;
      const now = deps.clock();
      const row: NotifierRow = {
        id: newId('ntf', now.getTime()),
        name: body.name,
        kind: body.kind,
        config: shown,
        secrets_enc: seal(allSecrets),
        events: body.events,
        match: body.match ?? null,
        created_by: p.id,
        created_at: iso(now),
        updated_at: iso(now),
      };
      await unique(body.name, () =>
        deps.transaction(async (r) => {
          await r.notifiers.insert(row);
          await grantCreatorManage(r.grants, p, row.id, now);
          const summary = `created ${body.kind} notifier ${row.name} for ${body.events.join(', ')}`;
          await recordAudit(r.audit, { actor: p.id, action: 'notifier.create', object: row.id, summary }, deps.clock);
        }),
      );
      return { ...view(row, allSecrets), ...(signing ? { secret: signing } : {}) };
    },

    async list(
      p: Principal,
      page: PageQuery & { cursor?: string | undefined },
      filter: { template?: string | undefined } = {},
    ): Promise<Page<Notifier>> {
      const rows = await deps.notifiers.list(visiblePageQuery(page, await deps.authz.visibleIds(p, 'ntf')));
      const out = toPage(rows, page.limit, (x) => x.id);
      const forTemplate = (row: NotifierRow) => {
        const templates = (row.match as NotifierMatch | null)?.templates;
        return filter.template === undefined || templates === undefined || templates.includes(filter.template);
      };
      return { items: out.items.filter(forTemplate).map((r) => view(r)), next: out.next };
    },

    async get(p: Principal, id: string): Promise<Notifier> {
      return view(await visible(p, id, 'use'));
    },

    /** Given fields replace; `config` merges over the stored config and secrets (a secret left out is kept). */
    async update(p: Principal, id: string, body: NotifierUpdateBody): Promise<Notifier> {
      const row = await visible(p, id, 'manage');
      const kind = row.kind as NotifierKind;
      const stored = open(row);
      let config = row.config;
      let secrets = stored;
      if (body.config !== undefined) {
        const current: Record<string, unknown> =
          kind === 'webhook'
            ? { url: row.config.url, headers: stored.headers }
            : kind === 'slack'
              ? { url: stored.url }
              : { ...row.config, ...(stored.password !== undefined ? { password: stored.password } : {}) };
        const merged = Object.fromEntries(
          Object.entries({ ...current, ...body.config }).filter(([, v]) => v !== null && v !== undefined),
        );
        const parsed = CONFIG_SCHEMAS[kind].safeParse(merged);
        if (!parsed.success)
          throw new ValidationError(
            `invalid ${kind} config`,
            parsed.error.issues.map((i) => ({
              path: ['body', 'config', ...i.path.map(String)].join('.'),
              message: i.message,
            })),
          );
        const next = split(kind, parsed.data as Record<string, unknown>);
        config = next.shown;
        secrets = kind === 'webhook' ? { ...next.secrets, secret: stored.secret } : next.secrets;
      }
      const patch = {
        ...(body.name !== undefined ? { name: body.name } : {}),
        config,
        secrets_enc: seal(secrets),
        ...(body.events !== undefined ? { events: body.events } : {}),
        ...(body.match !== undefined ? { match: body.match } : {}),
        updated_at: iso(deps.clock()),
      };
      await unique(body.name ?? row.name, () =>
        deps.transaction(async (r) => {
          if (!(await r.notifiers.update(id, patch))) throw notFound('notifier', id);
          const what = Object.keys(body).filter((k) => body[k as keyof NotifierUpdateBody] !== undefined);
          const summary = `updated notifier ${patch.name ?? row.name}: changed ${what.join(', ')}`;
          await recordAudit(r.audit, { actor: p.id, action: 'notifier.update', object: id, summary }, deps.clock);
        }),
      );
      return view({ ...row, ...patch }, secrets);
    },

    /** Deletes it and the grants on it; pending deliveries go with it and are never sent. */
    async remove(p: Principal, id: string): Promise<void> {
      const row = await visible(p, id, 'manage');
      await deps.transaction(async (r) => {
        await r.grants.deleteMentioning(id);
        if (!(await r.notifiers.delete(id))) throw notFound('notifier', id);
        const summary = `deleted notifier ${row.name}`;
        await recordAudit(r.audit, { actor: p.id, action: 'notifier.delete', object: id, summary }, deps.clock);
      });
    },

    /** A new signing secret for a webhook notifier, shown once. */
    async rotateSecret(p: Principal, id: string): Promise<Notifier & { secret: string }> {
      const row = await visible(p, id, 'manage');
      if (row.kind !== 'webhook')
        throw new ConflictError(`notifier ${id} is a ${row.kind} notifier; only webhooks sign`);
      const secrets = { ...open(row), secret: randomSecret() };
      const patch = { secrets_enc: seal(secrets), updated_at: iso(deps.clock()) };
      await deps.transaction(async (r) => {
        if (!(await r.notifiers.update(id, patch))) throw notFound('notifier', id);
        const summary = `rotated the signing secret of notifier ${row.name}`;
        await recordAudit(r.audit, { actor: p.id, action: 'notifier.rotate_secret', object: id, summary }, deps.clock);
      });
      return { ...view({ ...row, ...patch }, secrets), secret: secrets.secret };
    },

    /** Queues a test message through the same delivery path (so its attempt shows in the log). */
    async test(p: Principal, id: string): Promise<Delivery> {
      const row = await visible(p, id, 'manage');
      const at = iso(deps.clock());
      const message: NotificationMessage = {
        event: 'test',
        at,
        run: null,
        summary: `Baton test message for notifier ${row.name}`,
      };
      const delivery = pendingDelivery({ notifierId: id, outboxId: null, event: 'test', runId: null, message, at });
      await deps.transaction(async (r) => {
        await r.notifiers.insertDelivery(delivery);
        const summary = `queued a test message to notifier ${row.name}`;
        await recordAudit(r.audit, { actor: p.id, action: 'notifier.test', object: id, summary }, deps.clock);
      });
      return toDeliveryView(delivery);
    },

    async deliveries(p: Principal, id: string, limit: number): Promise<Delivery[]> {
      await visible(p, id, 'use');
      return (await deps.notifiers.deliveriesOf(id, limit)).map(toDeliveryView);
    },

    /** INTERNAL (the sender): the notifier's secrets, opened. */
    secretsOf: open,
  };
}
export type NotifierService = ReturnType<typeof createNotifierService>;
