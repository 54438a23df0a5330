// Composes the inventory and inventory-source services with the executor's real ansible-inventory runners.
import {
  type Authorizer,
  type Clock,
  type CredentialGate,
  createInventoryService,
  createInventorySourceService,
  type InventorySourceRunners,
} from '@baton/core';
import type { ParsedInventory } from '@baton/contracts';
import type { Database } from '@baton/db';
import { type FetchPolicy, loadUrlInventory, parseInventory, runInventorySource, type Sandbox } from '@baton/executor';
import { memo, memoizeInventoryParser } from './inventory-memo.js';

/** Bounds of one ansible-inventory run or URL fetch: a refresh answers synchronously, so these bound the request. */
export const INVENTORY_LIMITS = { timeoutMs: 60_000, maxOutputBytes: 16 * 1024 * 1024 } as const;

export interface InventoryWiringOptions {
  authz: Authorizer;
  clock: Clock;
  credentials: CredentialGate;
  /** how a script or plugin source gets its project's files; the projects domain provides it */
  checkout: InventorySourceRunners['checkout'];
  /** extra CA certificates (PEM) trusted for url sources; production uses the system store only */
  urlCa?: string | undefined;
  /** ansible-inventory and source scripts run in it (bubblewrap), so a script cannot read the data dir */
  sandbox?: Sandbox | undefined;
  /** where URL sources may be fetched from (BATON_FETCH_DENY_PRIVATE) */
  fetchPolicy?: FetchPolicy | undefined;
}

/**
 * Readings remembered for the whole process, not per wiring: `baton serve` has one wiring, and a process holding
 * several (a test run makes one per harness) asks ansible-inventory each question once. A reading depends only on
 * the content (the sandbox changes where ansible-inventory may look, not what a plain inventory file says).
 */
const PARSED_INVENTORIES = memo<ParsedInventory>(256);

export function createInventoryServices(db: Database, opts: InventoryWiringOptions) {
  const { repos, transaction } = db;
  // ansible-inventory, shared by the inventories domain and imports (which parse before their transaction).
  const parse = memoizeInventoryParser(
    (content) =>
      parseInventory({
        content,
        timeoutMs: INVENTORY_LIMITS.timeoutMs,
        maxOutputBytes: INVENTORY_LIMITS.maxOutputBytes,
        sandbox: opts.sandbox,
      }),
    256,
    PARSED_INVENTORIES,
  );
  const runners: InventorySourceRunners = {
    runSource: (o) => runInventorySource({ ...o, ...INVENTORY_LIMITS, sandbox: opts.sandbox }),
    loadUrl: (o) =>
      loadUrlInventory({
        ...o,
        ca: opts.urlCa,
        denyPrivate: opts.fetchPolicy?.denyPrivate ?? false,
        timeoutMs: INVENTORY_LIMITS.timeoutMs,
        maxBytes: INVENTORY_LIMITS.maxOutputBytes,
      }),
    checkout: opts.checkout,
  };
  return {
    parseInventory: parse,
    inventories: createInventoryService({
      inventories: repos.inventories,
      inventorySources: repos.inventorySources,
      transaction,
      authz: opts.authz,
      clock: opts.clock,
      usedBy: (id) => repos.launchRefs.ownersOf(id),
      parse,
    }),
    inventorySources: createInventorySourceService({
      inventorySources: repos.inventorySources,
      inventories: repos.inventories,
      projects: repos.projects,
      transaction,
      authz: opts.authz,
      clock: opts.clock,
      credentials: opts.credentials,
      runners,
    }),
  };
}
