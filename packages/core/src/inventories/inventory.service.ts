import {
  DEFAULT_HOST_KEY_CHECKING,
  type HostKeyChecking,
  type InventoryGroup,
  type InventoryHost,
  InventoryParseError,
  type ParsedInventory,
} from '@baton/contracts';
import {
  type AuditRepo,
  DuplicateKeyError,
  type GrantRepo,
  type InventoryRepo,
  type InventoryRow,
  type InventorySourceRepo,
  type InventorySummaryRow,
  type KnownHostRepo,
  type PageQuery,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { inUseConflict, type ObjectUse } from '../authz/in-use.js';
import { grantCreatorManage, notFound } from '../authz/authorize.js';
import type { Authorizer, Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, ValidationError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, decodeTextCursor, encodeCursor, type Page, toPage } from '../common/paging.js';

/**
 * Parses inventory content with the real ansible-inventory (the executor's parseInventory, injected so core
 * never imports the executor). Rejects with an InventoryParseError (declared in contracts) when ansible refuses it.
 */
export type InventoryParser = (content: string) => Promise<ParsedInventory>;

export interface InventoryView {
  id: string;
  name: string;
  format: ParsedInventory['format'];
  host_count: number;
  groups: InventoryGroup[];
  host_key_checking: HostKeyChecking;
  created_by: string;
  created_at: string;
  updated_at: string;
  content?: string;
}

export function toInventoryView(row: InventorySummaryRow | InventoryRow): InventoryView {
  return {
    id: row.id,
    name: row.name,
    format: row.format as InventoryView['format'],
    host_count: row.host_count,
    groups: row.groups,
    host_key_checking: row.host_key_checking as HostKeyChecking,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...('content' in row ? { content: row.content } : {}),
  };
}

/**
 * Writes parsed content, its groups, host count and host rows. Call it with the repositories of the
 * transaction that also records the audit entry, so the host list never disagrees with the content.
 */
export async function storeInventoryContent(
  inventories: Pick<InventoryRepo, 'update' | 'replaceHosts'>,
  id: string,
  content: { text: string; parsed: Pick<ParsedInventory, 'format' | 'hosts' | 'groups'> },
  updatedAt: string,
  name?: string,
): Promise<boolean> {
  const { parsed } = content;
  const updated = await inventories.update(id, {
    ...(name !== undefined ? { name } : {}),
    format: parsed.format,
    content: content.text,
    groups: parsed.groups,
    host_count: parsed.hosts.length,
    updated_at: updatedAt,
  });
  if (updated)
    await inventories.replaceHosts(
      id,
      parsed.hosts.map((h) => ({ host: h.name, groups: h.groups })),
    );
  return updated;
}

type TxRepos = {
  inventories: Pick<InventoryRepo, 'insert' | 'update' | 'delete' | 'replaceHosts'>;
  inventorySources: Pick<InventorySourceRepo, 'usingInventory'>;
  grants: Pick<GrantRepo, 'insert' | 'deleteMentioning'>;
  audit: Pick<AuditRepo, 'append'>;
  knownHosts: Pick<KnownHostRepo, 'remove'>;
};

type InventoryBody = { name: string; content: string; host_key_checking?: HostKeyChecking | undefined };

export function createInventoryService(deps: {
  inventories: Pick<InventoryRepo, 'findById' | 'findSummary' | 'list' | 'listHosts'>;
  inventorySources: Pick<InventorySourceRepo, 'usingInventory'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireCreator' | 'requireVisible' | 'visibleIds' | 'levelOn'>;
  parse: InventoryParser;
  clock: Clock;
  /** templates, schedules and triggers that name it: deleting it is a 409 while they do */
  usedBy?: (inventoryId: string) => Promise<ObjectUse[]>;
}) {
  /** Unknown and invisible inventories both answer 404 (the authorizer's rule 5). */
  async function visible(p: Principal, id: string, need: 'use' | 'manage'): Promise<InventorySummaryRow> {
    return deps.authz.requireVisible(p, need, { kind: 'inventory', id, row: await deps.inventories.findSummary(id) });
  }

  /** ansible's refusal becomes a 400 naming body.content with ansible's message. */
  async function parseContent(content: string): Promise<ParsedInventory> {
    try {
      return await deps.parse(content);
    } catch (err) {
      if (!(err instanceof InventoryParseError)) throw err;
      throw new ValidationError(err.message, [{ path: 'body.content', message: err.message }]);
    }
  }

  const duplicateName = (name: string) => new ConflictError(`an inventory named ${name} already exists`);

  return {
    async create(p: Principal, body: InventoryBody): Promise<InventoryView> {
      deps.authz.requireCreator(p);
      const parsed = await parseContent(body.content);
      const now = deps.clock();
      const at = iso(now);
      const row: InventoryRow = {
        id: newId('inv', now.getTime()),
        name: body.name,
        format: parsed.format,
        content: body.content,
        groups: parsed.groups,
        host_count: parsed.hosts.length,
        host_key_checking: body.host_key_checking ?? DEFAULT_HOST_KEY_CHECKING,
        created_by: p.id,
        created_at: at,
        updated_at: at,
      };
      try {
        await deps.transaction(async (r) => {
          await r.inventories.insert(row);
          await r.inventories.replaceHosts(
            row.id,
            parsed.hosts.map((h) => ({ host: h.name, groups: h.groups })),
          );
          await grantCreatorManage(r.grants, p, row.id, now);
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'inventory.create',
              object: row.id,
              summary: `created inventory ${row.name} (${parsed.format}, ${row.host_count} hosts)`,
            },
            deps.clock,
          );
        });
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw duplicateName(body.name);
        throw err;
      }
      return toInventoryView(row);
    },

    async list(p: Principal, page: PageQuery & { cursor?: string | undefined }): Promise<Page<InventoryView>> {
      const visibleIds = await deps.authz.visibleIds(p, 'inv');
      const rows = await deps.inventories.list(
        { limit: page.limit + 1, before: decodeCursor(page.cursor) },
        visibleIds,
      );
      const result = toPage(rows, page.limit, (r) => r.id);
      return { items: result.items.map(toInventoryView), next: result.next };
    },

    /** One inventory with its content. */
    async get(p: Principal, id: string): Promise<InventoryView> {
      await visible(p, id, 'use');
      const row = await deps.inventories.findById(id);
      if (!row) throw notFound('inventory', id);
      return toInventoryView(row);
    },

    /** Hosts in name order, from the stored host list: no ansible run. */
    async listHosts(
      p: Principal,
      id: string,
      page: { limit: number; cursor?: string | undefined },
    ): Promise<Page<InventoryHost>> {
      await visible(p, id, 'use');
      // Host names hold characters the id cursor decoder refuses (`:` for ports, dots).
      const after = decodeTextCursor(page.cursor);
      const rows = await deps.inventories.listHosts(id, { limit: page.limit + 1, before: after });
      const items = rows.slice(0, page.limit).map((h) => ({ name: h.host, groups: h.groups }));
      const last = items[items.length - 1];
      return { items, next: rows.length > page.limit && last ? encodeCursor(last.name) : undefined };
    },

    /** A body without host_key_checking leaves it as it is. */
    async update(p: Principal, id: string, body: InventoryBody): Promise<InventoryView> {
      const before = await visible(p, id, 'manage');
      const parsed = await parseContent(body.content);
      const at = iso(deps.clock());
      try {
        await deps.transaction(async (r) => {
          if (!(await storeInventoryContent(r.inventories, id, { text: body.content, parsed }, at, body.name)))
            throw notFound('inventory', id);
          const checking = body.host_key_checking;
          if (checking !== undefined && checking !== before.host_key_checking)
            await r.inventories.update(id, { host_key_checking: checking });
          const renamed = before.name === body.name ? '' : ` (was ${before.name})`;
          const policy =
            checking !== undefined && checking !== before.host_key_checking
              ? `, host key checking ${before.host_key_checking} → ${checking}`
              : '';
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'inventory.update',
              object: id,
              summary: `updated inventory ${body.name}${renamed}: ${parsed.format}, ${parsed.hosts.length} hosts${policy}`,
            },
            deps.clock,
          );
        });
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw duplicateName(body.name);
        throw err;
      }
      return this.get(p, id);
    },

    /** 409 while an inventory source writes into it: deleting the source first is a deliberate step. */
    async remove(p: Principal, id: string): Promise<void> {
      const inv = await visible(p, id, 'manage');
      const conflict = await inUseConflict(p, `inventory ${id}`, (await deps.usedBy?.(id)) ?? [], deps.authz);
      if (conflict) throw conflict;
      await deps.transaction(async (r) => {
        const users = await r.inventorySources.usingInventory(id);
        if (users.length)
          throw new ConflictError(
            `inventory ${inv.name} is the target of inventory sources: ${users.map((s) => `${s.name} (${s.id})`).join(', ')}`,
          );
        await r.grants.deleteMentioning(id);
        await r.knownHosts.remove('inventory', id);
        if (!(await r.inventories.delete(id))) throw notFound('inventory', id);
        await recordAudit(
          r.audit,
          { actor: p.id, action: 'inventory.delete', object: id, summary: `deleted inventory ${inv.name}` },
          deps.clock,
        );
      });
    },

    /** For other domains (runs): who may use it, and its content. */
    async requireUsable(p: Principal, id: string): Promise<InventoryRow> {
      await visible(p, id, 'use');
      const row = await deps.inventories.findById(id);
      if (!row) throw notFound('inventory', id);
      return row;
    },
  };
}
export type InventoryService = ReturnType<typeof createInventoryService>;
