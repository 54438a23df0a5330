import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CredentialType, InventorySourceKind, ParsedInventory } from '@baton/contracts';
import {
  type AuditRepo,
  DuplicateKeyError,
  type GrantRepo,
  type InventoryRepo,
  type InventorySourceRepo,
  type InventorySourceRow,
  type PageQuery,
  type ProjectRepo,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { grantCreatorManage, notFound } from '../authz/authorize.js';
import type { Authorizer, Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { BatonError, ConflictError, ValidationError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, type Page, toPage } from '../common/paging.js';
import { storeInventoryContent } from '../inventories/inventory.service.js';

/** What a source yields: the parsed inventory and the content to store (YAML-shaped JSON, runs nothing when read). */
export type SourceInventory = ParsedInventory & { content: string };

/** The executor's runners, injected so core never imports the executor. Any rejection is the source's failure. */
export interface InventorySourceRunners {
  /** ansible-inventory on a script or plugin config inside a checkout, with only these plugins enabled */
  runSource(opts: { source: string; cwd: string; enablePlugins: string[] }): Promise<SourceInventory>;
  /** an HTTPS URL returning inventory-script JSON */
  loadUrl(opts: { url: string; token?: string | undefined }): Promise<SourceInventory>;
  /** checks out the project's resolved commit into `dir` (empty, private) */
  checkout(p: Principal, projectId: string, dir: string): Promise<void>;
}

/** The credentials domain's check: visible, `use` grant, allowed type; answers the secret inputs. */
export interface CredentialGate {
  requireUsable(
    p: Principal,
    id: string,
    field: string,
    allowed: readonly CredentialType[],
  ): Promise<{ id: string; type: string; inputs: unknown }>;
}

/** A refresh failed; the message is also stored as the source's last_error. The HTTP layer answers 422. */
export class InventoryRefreshError extends BatonError {
  constructor(
    message: string,
    readonly source: InventorySourceRow,
  ) {
    super(message);
  }
}

/** Which plugins ansible-inventory may use per kind: a script source runs its script, a plugin config whatever plugin it names. */
const PLUGINS_FOR_KIND: Record<Exclude<InventorySourceKind, 'url'>, string[]> = {
  script: ['script'],
  plugin: ['auto'],
};
/** Error texts are stored and shown: long ansible tracebacks are cut. */
const MAX_ERROR_CHARS = 4000;

export interface InventorySourceFields {
  name: string;
  kind: InventorySourceKind;
  inventory_id: string;
  project_id?: string | null | undefined;
  path?: string | null | undefined;
  url?: string | null | undefined;
  credential_id?: string | null | undefined;
  refresh_interval_s?: number | null | undefined;
}

type TxRepos = {
  inventories: Pick<InventoryRepo, 'update' | 'replaceHosts'>;
  inventorySources: Pick<InventorySourceRepo, 'insert' | 'update' | 'delete' | 'findById'>;
  grants: Pick<GrantRepo, 'insert' | 'deleteMentioning'>;
  audit: Pick<AuditRepo, 'append'>;
};

export function createInventorySourceService(deps: {
  inventorySources: Pick<InventorySourceRepo, 'findById' | 'list'>;
  projects: Pick<ProjectRepo, 'findById'>;
  inventories: Pick<InventoryRepo, 'findSummary'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireCreator' | 'requireVisible' | 'visibleIds'>;
  credentials: CredentialGate;
  runners: InventorySourceRunners;
  clock: Clock;
}) {
  async function visible(p: Principal, id: string, need: 'use' | 'manage'): Promise<InventorySourceRow> {
    return deps.authz.requireVisible(p, need, {
      kind: 'inventory source',
      id,
      row: await deps.inventorySources.findById(id),
    });
  }

  /**
   * The objects a source points at must exist and be the caller's to point at: the target inventory needs
   * manage (a refresh overwrites it), the project and the token credential need use.
   */
  async function checkReferences(p: Principal, body: InventorySourceFields): Promise<void> {
    await deps.authz.requireVisible(p, 'manage', {
      kind: 'inventory',
      id: body.inventory_id,
      row: await deps.inventories.findSummary(body.inventory_id),
    });
    if (body.project_id)
      await deps.authz.requireVisible(p, 'use', {
        kind: 'project',
        id: body.project_id,
        row: await deps.projects.findById(body.project_id),
      });
    if (body.credential_id)
      await deps.credentials.requireUsable(p, body.credential_id, 'body.credential_id', ['token']);
  }

  const columns = (body: InventorySourceFields) => ({
    name: body.name,
    kind: body.kind,
    inventory_id: body.inventory_id,
    project_id: body.project_id ?? null,
    path: body.path ?? null,
    url: body.url ?? null,
    credential_id: body.credential_id ?? null,
    refresh_interval_s: body.refresh_interval_s ?? null,
  });
  const duplicateName = (name: string) => new ConflictError(`an inventory source named ${name} already exists`);

  /** Runs the source; every failure (checkout, script, fetch, ansible) comes back as a message. */
  async function load(p: Principal, src: InventorySourceRow): Promise<SourceInventory> {
    if (src.kind === 'url') {
      const token = src.credential_id
        ? tokenOf(await deps.credentials.requireUsable(p, src.credential_id, 'credential_id', ['token']))
        : undefined;
      return deps.runners.loadUrl({ url: src.url!, token });
    }
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'baton-source-'));
    try {
      await deps.runners.checkout(p, src.project_id!, dir);
      const target = await insideCheckout(dir, src.path!);
      return await deps.runners.runSource({
        source: target,
        cwd: dir,
        enablePlugins: PLUGINS_FOR_KIND[src.kind as 'script' | 'plugin'],
      });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  }

  return {
    async create(p: Principal, body: InventorySourceFields): Promise<InventorySourceRow> {
      deps.authz.requireCreator(p);
      await checkReferences(p, body);
      const now = deps.clock();
      const at = iso(now);
      const row: InventorySourceRow = {
        id: newId('src', now.getTime()),
        ...columns(body),
        refreshed_at: null,
        host_count: null,
        last_error: null,
        created_by: p.id,
        created_at: at,
        updated_at: at,
      };
      try {
        await deps.transaction(async (r) => {
          await r.inventorySources.insert(row);
          await grantCreatorManage(r.grants, p, row.id, now);
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'inventory_source.create',
              object: row.id,
              summary: `created ${row.kind} inventory source ${row.name} into ${row.inventory_id}`,
            },
            deps.clock,
          );
        });
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw duplicateName(body.name);
        throw err;
      }
      return row;
    },

    async list(p: Principal, page: PageQuery & { cursor?: string | undefined }): Promise<Page<InventorySourceRow>> {
      const ids = await deps.authz.visibleIds(p, 'src');
      const rows = await deps.inventorySources.list({ limit: page.limit + 1, before: decodeCursor(page.cursor) }, ids);
      return toPage(rows, page.limit, (r) => r.id);
    },

    get(p: Principal, id: string): Promise<InventorySourceRow> {
      return visible(p, id, 'use');
    },

    /** A full replacement of the definition; the refresh state (refreshed_at, host_count, last_error) stays. */
    async update(p: Principal, id: string, body: InventorySourceFields): Promise<InventorySourceRow> {
      await visible(p, id, 'manage');
      await checkReferences(p, body);
      const at = iso(deps.clock());
      try {
        return await deps.transaction(async (r) => {
          if (!(await r.inventorySources.update(id, { ...columns(body), updated_at: at })))
            throw notFound('inventory source', id);
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'inventory_source.update',
              object: id,
              summary: `updated ${body.kind} inventory source ${body.name}`,
            },
            deps.clock,
          );
          return (await r.inventorySources.findById(id))!;
        });
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw duplicateName(body.name);
        throw err;
      }
    },

    async remove(p: Principal, id: string): Promise<void> {
      const src = await visible(p, id, 'manage');
      await deps.transaction(async (r) => {
        await r.grants.deleteMentioning(id);
        if (!(await r.inventorySources.delete(id))) throw notFound('inventory source', id);
        await recordAudit(
          r.audit,
          {
            actor: p.id,
            action: 'inventory_source.delete',
            object: id,
            summary: `deleted inventory source ${src.name}`,
          },
          deps.clock,
        );
      });
    },

    /**
     * Runs the source now and, on success, replaces the target inventory's content, hosts and groups in the
     * same transaction as the source's refresh state and the audit entry. On failure only last_error is
     * recorded: the inventory keeps its last good content. Synchronous: the runners' timeouts bound it.
     */
    async refresh(p: Principal, id: string): Promise<InventorySourceRow> {
      const src = await visible(p, id, 'use');
      // A refresh runs code on the server and rewrites an inventory: viewers never change anything.
      deps.authz.requireCreator(p);
      let result: SourceInventory;
      try {
        result = await load(p, src);
      } catch (err) {
        // Lookups that fail for the caller (the credential went away, lost grant) are answered as such, not stored.
        if (err instanceof BatonError) throw err;
        const message = (err instanceof Error ? err.message : String(err)).slice(0, MAX_ERROR_CHARS);
        const failed = await deps.transaction(async (r) => {
          await r.inventorySources.update(id, { last_error: message });
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'inventory_source.refresh_failed',
              object: id,
              summary: `refresh of inventory source ${src.name} failed`,
            },
            deps.clock,
          );
          return r.inventorySources.findById(id);
        });
        throw new InventoryRefreshError(message, failed ?? { ...src, last_error: message });
      }
      const at = iso(deps.clock());
      return deps.transaction(async (r) => {
        if (
          !(await storeInventoryContent(r.inventories, src.inventory_id, { text: result.content, parsed: result }, at))
        ) {
          throw notFound('inventory', src.inventory_id);
        }
        await r.inventorySources.update(id, { refreshed_at: at, host_count: result.hosts.length, last_error: null });
        await recordAudit(
          r.audit,
          {
            actor: p.id,
            action: 'inventory_source.refresh',
            object: id,
            summary: `refreshed inventory ${src.inventory_id} from source ${src.name}: ${result.hosts.length} hosts`,
          },
          deps.clock,
        );
        return (await r.inventorySources.findById(id))!;
      });
    },
  };
}
export type InventorySourceService = ReturnType<typeof createInventorySourceService>;

function tokenOf(credential: { inputs: unknown }): string {
  const inputs = credential.inputs as { token?: unknown } | null;
  if (typeof inputs?.token !== 'string')
    throw new ValidationError('the credential has no token', [
      { path: 'credential_id', message: 'must be a token credential' },
    ]);
  return inputs.token;
}

/** The path was checked to be relative without `..`; a symlink in the checkout could still point out of it. */
async function insideCheckout(dir: string, relative: string): Promise<string> {
  const root = await fs.realpath(dir);
  let target: string;
  try {
    target = await fs.realpath(path.join(root, relative));
  } catch {
    throw new Error(`${relative} does not exist in the project`);
  }
  if (target !== root && !target.startsWith(root + path.sep))
    throw new Error(`${relative} leads out of the project checkout`);
  return target;
}
