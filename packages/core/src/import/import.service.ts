// Import of AWX and Semaphore exports (issue 16): admins only; the document is read by its format's mapper, its
// inventories parsed, then everything is written in one transaction (a dry run rolls that transaction back, so its
// report is exactly what the real import would say). Nothing here reaches the network.
import crypto from 'node:crypto';
import {
  documentShapeIssue,
  type ImportFormat,
  type ImportQuery,
  type ImportReport,
  InventoryParseError,
  MAX_IMPORT_DEPTH,
  type ParsedInventory,
} from '@baton/contracts';
import { DuplicateKeyError } from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import type { Authorizer, Principal } from '../authz/authorize.js';
import type { Clock } from '../common/clock.js';
import { iso } from '../common/clock.js';
import { ConflictError, ValidationError } from '../common/errors.js';
import { hashPassword } from '../crypto/password.js';
import type { Keyring } from '../crypto/secret-box.js';
import type { InventoryParser } from '../inventories/inventory.service.js';
import { type ApplyResult, applyPlan } from './import-apply.js';
import type { ImportMapper, ImportPlan } from './import-plan.js';
import type { ImportTx, WriteContext } from './import-write.js';

export interface ImportServiceDeps {
  transaction: <T>(fn: (tx: ImportTx) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireAdmin'>;
  clock: Clock;
  keyring: Pick<Keyring, 'encrypt' | 'decrypt'>;
  /** ansible-inventory, run locally (never a fetch) */
  parseInventory: InventoryParser;
  mappers: Record<ImportFormat, ImportMapper>;
}

const SOURCE_NAME: Record<ImportFormat, string> = { awx: 'an AWX export', semaphore: 'a Semaphore backup' };

/** Carries a dry run's result out of the transaction it rolls back. */
class DryRun extends Error {
  constructor(readonly result: ApplyResult) {
    super('dry run');
  }
}

export function createImportService(deps: ImportServiceDeps) {
  /** Each distinct inventory content parsed once; a refusal becomes a warning (the writer then skips it). */
  async function parseInventories(plan: ImportPlan, warn: (m: string) => void): Promise<Map<string, ParsedInventory>> {
    const parsed = new Map<string, ParsedInventory>();
    const byContent = new Map<string, ParsedInventory | undefined>();
    for (const o of plan.objects) {
      if (o.kind !== 'inventory') continue;
      if (!byContent.has(o.content)) {
        try {
          byContent.set(o.content, await deps.parseInventory(o.content));
        } catch (err) {
          if (!(err instanceof InventoryParseError)) throw err;
          byContent.set(o.content, undefined);
          warn(`inventory ${o.name}: ansible-inventory refused its content: ${err.message}`);
        }
      }
      const result = byContent.get(o.content);
      if (result) parsed.set(o.key, result);
    }
    return parsed;
  }

  return {
    async run(p: Principal, format: ImportFormat, doc: unknown, query: ImportQuery): Promise<ImportReport> {
      deps.authz.requireAdmin(p);
      const shape = documentShapeIssue(doc, MAX_IMPORT_DEPTH);
      if (shape)
        throw new ValidationError(`this is not ${SOURCE_NAME[format]}: ${shape.path} ${shape.message}`, [shape]);
      const mapped = deps.mappers[format](doc);
      if (!mapped.ok) {
        const { path, message } = mapped.problem;
        throw new ValidationError(`this is not ${SOURCE_NAME[format]}: ${path} ${message}`, [mapped.problem]);
      }
      const plan = mapped.plan;
      const warnings = [...plan.warnings];
      const warn = (m: string) => warnings.push(m);
      const inventories = await parseInventories(plan, warn);
      const unusablePasswordHash = plan.objects.some((o) => o.kind === 'user')
        ? await hashPassword(crypto.randomBytes(32).toString('base64url'))
        : '';
      const dryRun = query.dry_run ?? false;
      let result: ApplyResult;
      try {
        result = await deps.transaction(async (tx) => {
          const now = deps.clock();
          const w: WriteContext = {
            tx,
            importer: p,
            clock: deps.clock,
            now,
            at: iso(now),
            keyring: deps.keyring,
            unusablePasswordHash,
            inventories,
            source: format === 'awx' ? 'AWX' : 'Semaphore',
            warn,
          };
          const applied = await applyPlan(w, plan, query.on_conflict);
          const counts = Object.entries(applied.created).map(([k, n]) => `${n} ${k}`);
          await recordAudit(
            tx.audit,
            {
              actor: p.id,
              action: `import.${format}`,
              object: null,
              summary: `imported ${SOURCE_NAME[format]}${plan.source_version ? ` (${plan.source_version})` : ''} with on_conflict=${query.on_conflict}: created ${counts.join(', ') || 'nothing'}; updated ${Object.values(applied.updated).reduce((a, b) => a + b, 0)}, skipped ${plan.skipped.length + applied.skipped.length}`,
            },
            deps.clock,
          );
          if (dryRun) throw new DryRun(applied);
          return applied;
        });
      } catch (err) {
        // Names are checked inside the transaction; only a concurrent change can take one after the check.
        if (err instanceof DuplicateKeyError)
          throw new ConflictError(
            'another change took a name this import uses while it ran; nothing was written, try again',
          );
        if (!(err instanceof DryRun)) throw err;
        result = err.result;
      }
      return {
        format,
        ...(plan.source_version ? { source_version: plan.source_version } : {}),
        dry_run: dryRun,
        on_conflict: query.on_conflict,
        created: result.created,
        updated: result.updated,
        skipped: [...plan.skipped, ...result.skipped],
        warnings,
        needs_secret: result.needs_secret,
        users_needing_password: result.users_needing_password,
        id_map: result.id_map,
      };
    },
  };
}
export type ImportService = ReturnType<typeof createImportService>;
