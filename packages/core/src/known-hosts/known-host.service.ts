// The SSH host keys of an inventory's hosts and of a project's git server: review (use on the owner), pin, replace
// and forget (manage). Runs record first-seen keys themselves (known-host-record.ts); a user's word always wins:
// pinning replaces whatever a run recorded for that host.
import { createHash } from 'node:crypto';
import { type HostKeyChecking, type KnownHost, type KnownHostList, parseKnownHosts } from '@baton/contracts';
import {
  type AuditRepo,
  DuplicateKeyError,
  type InventoryRepo,
  type KnownHostRepo,
  type KnownHostRow,
  type KnownHostScope,
  type ProjectRepo,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import type { Authorizer, Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, NotFoundError, ValidationError } from '../common/errors.js';
import { knownHostRows } from './known-host-record.js';

/** OpenSSH's fingerprint of a key blob: `SHA256:` and the unpadded base64 of its SHA-256. */
export function hostKeyFingerprint(key: string): string {
  return `SHA256:${createHash('sha256').update(Buffer.from(key, 'base64')).digest('base64').replace(/=+$/, '')}`;
}

export function toKnownHostView(row: KnownHostRow): KnownHost {
  return {
    host: row.host,
    key_type: row.key_type,
    key: row.key,
    fingerprint: hostKeyFingerprint(row.key),
    source: row.source as KnownHost['source'],
    run_id: row.run_id,
    created_by: row.created_by,
    created_at: row.created_at,
  };
}

type TxRepos = {
  knownHosts: Pick<KnownHostRepo, 'replaceAll' | 'replaceHost' | 'remove'>;
  audit: Pick<AuditRepo, 'append'>;
};

const OWNER_KIND: Record<KnownHostScope, 'inventory' | 'project'> = { inventory: 'inventory', project: 'project' };

export function createKnownHostService(deps: {
  knownHosts: Pick<KnownHostRepo, 'list' | 'listHost'>;
  inventories: Pick<InventoryRepo, 'findSummary'>;
  projects: Pick<ProjectRepo, 'findById'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireVisible'>;
  clock: Clock;
}) {
  /** The owner (404 when unknown or invisible, 403 without `need`) and its policy. */
  /**
   * Two replacements of the same keys at once on PostgreSQL (read committed): both delete, then the later insert
   * meets the earlier one's rows and the unique key refuses it (a 500 before). The later one is tried again once, on
   * the committed rows, so the last word still wins; a third at the same moment is a 409 to retry, never a 500.
   */
  async function replacing(fn: (r: TxRepos) => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await deps.transaction(fn);
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
        if (attempt === 2) throw new ConflictError('the host keys changed at the same moment; send it again');
      }
    }
  }

  async function owner(
    p: Principal,
    scope: KnownHostScope,
    id: string,
    need: 'use' | 'manage',
  ): Promise<{ name: string; checking: HostKeyChecking }> {
    const row = scope === 'inventory' ? await deps.inventories.findSummary(id) : await deps.projects.findById(id);
    const found = await deps.authz.requireVisible(p, need, { kind: OWNER_KIND[scope], id, row });
    return { name: found.name, checking: found.host_key_checking as HostKeyChecking };
  }

  function pinned(p: Principal, scope: KnownHostScope, id: string, text: string, field: string, forHost?: string) {
    const { entries, problems } = parseKnownHosts(text, forHost);
    if (problems.length > 0) {
      const errors = problems.slice(0, 20).map((x) => ({ path: field, message: `line ${x.line}: ${x.message}` }));
      throw new ValidationError(`${field} has ${problems.length} bad line(s): ${errors[0]!.message}`, errors);
    }
    const origin = { source: 'pinned', run_id: null, created_by: p.id, created_at: iso(deps.clock()) };
    return knownHostRows(entries, scope, id, origin);
  }

  async function audit(r: TxRepos, p: Principal, action: string, id: string, summary: string) {
    await recordAudit(r.audit, { actor: p.id, action, object: id, summary }, deps.clock);
  }

  return {
    async list(p: Principal, scope: KnownHostScope, id: string): Promise<KnownHostList> {
      const { checking } = await owner(p, scope, id, 'use');
      const rows = await deps.knownHosts.list(scope, id);
      return { host_key_checking: checking, items: rows.map(toKnownHostView) };
    },

    /** Every stored key replaced by the given known_hosts text, all pinned; empty text clears them. */
    async replaceAll(p: Principal, scope: KnownHostScope, id: string, text: string): Promise<KnownHostList> {
      const { name } = await owner(p, scope, id, 'manage');
      const rows = pinned(p, scope, id, text, 'body.known_hosts');
      const hosts = new Set(rows.map((r) => r.host)).size;
      await replacing(async (r) => {
        await r.knownHosts.replaceAll(scope, id, rows);
        await audit(
          r,
          p,
          `${scope}.known_hosts.replace`,
          id,
          `replaced the host keys of ${scope} ${name}: ${rows.length} key(s) of ${hosts} host(s) pinned`,
        );
      });
      return this.list(p, scope, id);
    },

    /** One host's keys replaced by the given ones, pinned. */
    async pinHost(p: Principal, scope: KnownHostScope, id: string, host: string, text: string): Promise<KnownHost[]> {
      const { name } = await owner(p, scope, id, 'manage');
      const rows = pinned(p, scope, id, text, 'body.keys', host);
      if (rows.length === 0) {
        const message = 'give at least one key';
        throw new ValidationError(message, [{ path: 'body.keys', message }]);
      }
      await replacing(async (r) => {
        await r.knownHosts.replaceHost(scope, id, host, rows);
        const fingerprints = rows.map((k) => `${k.key_type} ${hostKeyFingerprint(k.key)}`).join(', ');
        await audit(
          r,
          p,
          `${scope}.known_hosts.pin`,
          id,
          `pinned the host key of ${host} for ${scope} ${name}: ${fingerprints}`,
        );
      });
      return (await deps.knownHosts.listHost(scope, id, host)).map(toKnownHostView);
    },

    /** Forgets every key (or one host's): on accept_new the next contact records them again. */
    async forget(p: Principal, scope: KnownHostScope, id: string, host?: string): Promise<number> {
      const { name } = await owner(p, scope, id, 'manage');
      return deps.transaction(async (r) => {
        const removed = await r.knownHosts.remove(scope, id, host);
        if (host !== undefined && removed === 0) throw new NotFoundError(`no host key of ${host} is stored`);
        const what = host === undefined ? 'every host key' : `the host key of ${host}`;
        await audit(r, p, `${scope}.known_hosts.forget`, id, `forgot ${what} for ${scope} ${name} (${removed} key(s))`);
        return removed;
      });
    },
  };
}
export type KnownHostService = ReturnType<typeof createKnownHostService>;
