// What every import writer shares: the transaction's repositories, the importer, the time, and how a body is checked
// against the API's own schema (the first issue becomes the reason the object is skipped).
import type { ParsedInventory } from '@baton/contracts';
import type { Repositories } from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import type { Principal } from '../authz/authorize.js';
import type { Clock } from '../common/clock.js';
import type { Keyring } from '../crypto/secret-box.js';
import type { PlannedObject } from './import-plan.js';

export type ImportTx = Pick<
  Repositories,
  | 'imports'
  | 'users'
  | 'teams'
  | 'grants'
  | 'credentials'
  | 'projects'
  | 'inventories'
  | 'inventorySources'
  | 'templates'
  | 'schedules'
  | 'triggers'
  | 'policies'
  | 'launchRefs'
  | 'audit'
>;

export interface WriteContext {
  tx: ImportTx;
  importer: Principal;
  clock: Clock;
  now: Date;
  at: string;
  keyring: Pick<Keyring, 'encrypt' | 'decrypt'>;
  /** a hash of a random password nobody knows: imported users cannot sign in until an admin sets one */
  unusablePasswordHash: string;
  /** parsed inventory content by plan key (parsed before the transaction: ansible-inventory is slow) */
  inventories: ReadonlyMap<string, ParsedInventory>;
  /** the format, for audit summaries */
  source: string;
  warn: (message: string) => void;
}

/** A body checked against its schema, or why the object cannot be imported. */
export type Checked<B> = { ok: true; body: B } | { ok: false; reason: string };

interface SafeParser<B> {
  safeParse(
    value: unknown,
  ):
    | { success: true; data: B }
    | { success: false; error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> } };
}

/** `value` through `schema`; a refusal names the first field and its problem. */
export function checkBody<B>(schema: SafeParser<B>, value: unknown): Checked<B> {
  const r = schema.safeParse(value);
  if (r.success) return { ok: true, body: r.data };
  const issue = r.error.issues[0];
  const where = issue?.path.length ? `${issue.path.map(String).join('.')}: ` : '';
  return { ok: false, reason: `${where}${issue?.message ?? 'not valid'}` };
}

export const refused = (reason: string): Checked<never> => ({ ok: false, reason });

export function audit(w: WriteContext, action: string, object: string, summary: string): Promise<unknown> {
  return recordAudit(w.tx.audit, { actor: w.importer.id, action, object, summary }, w.clock);
}

/** What a writer does with one planned object of its kind. */
export interface Writer<O extends PlannedObject, B> {
  /** the body to write, with ids in place of PlanRefs and `name` as the one to use, or why it cannot be */
  check(o: O, name: string, ids: ReadonlyMap<string, string>, w: WriteContext): Promise<Checked<B>> | Checked<B>;
  /** creates it; answers the new id */
  insert(w: WriteContext, body: B, o: O): Promise<string>;
  /** overwrites the existing object `id` (on_conflict=update); a string is why it was left alone */
  update(w: WriteContext, id: string, body: B, o: O): Promise<string | undefined>;
}
