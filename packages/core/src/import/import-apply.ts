// Writes a plan inside one transaction: kinds in dependency order, each object's references resolved to ids, its
// body checked by the API's own schema, name conflicts settled by on_conflict. Never throws for anything a document
// can cause: an object that cannot be written is skipped with its reason, and so is everything that needed it.
import type { ImportedKind, ImportReport, ImportSkipped, OnConflict } from '@baton/contracts';
import type { NamedTable } from '@baton/db';
import { lacksRequiredSecret } from '../credentials/credential.service.js';
import { openSealedJson } from '../crypto/secret-box.js';
import type { ImportPlan, PlannedObject } from './import-plan.js';
import { refsIn } from './import-refs.js';
import { grantWriter, membershipWriter, teamWriter, userWriter } from './import-write-identity.js';
import { credentialWriter, inventorySourceWriter, inventoryWriter, projectWriter } from './import-write-inputs.js';
import { policyWriter, scheduleWriter, templateWriter, triggerWriter } from './import-write-launch.js';
import type { WriteContext, Writer } from './import-write.js';

/** Kinds in the order they are written: each after everything it can refer to. */
const ORDER: ImportedKind[] = [
  'user',
  'team',
  'membership',
  'credential',
  'project',
  'inventory',
  'inventory_source',
  'template',
  'schedule',
  'trigger',
  'policy',
  'grant',
];

const TABLE: Partial<Record<ImportedKind, NamedTable>> = {
  user: 'users',
  team: 'teams',
  credential: 'credentials',
  project: 'projects',
  inventory: 'inventories',
  inventory_source: 'inventory_sources',
  template: 'templates',
  schedule: 'schedules',
  trigger: 'triggers',
  policy: 'policies',
};

type AnyWriter = Writer<PlannedObject, unknown> & { find?: (w: WriteContext, body: unknown) => Promise<boolean> };
const WRITERS = {
  user: userWriter,
  team: teamWriter,
  membership: membershipWriter,
  grant: grantWriter,
  credential: credentialWriter,
  project: projectWriter,
  inventory: inventoryWriter,
  inventory_source: inventorySourceWriter,
  template: templateWriter,
  schedule: scheduleWriter,
  trigger: triggerWriter,
  policy: policyWriter,
} as unknown as Record<ImportedKind, AnyWriter>;

/** The keys an object needs written before it. */
function dependencies(o: PlannedObject): string[] {
  switch (o.kind) {
    case 'membership':
      return [o.team, o.user];
    case 'grant':
      return [o.subject, o.object];
    case 'project':
      return o.credential ? [o.credential] : [];
    case 'inventory_source':
      return [o.inventory, o.project];
    case 'template':
      return refsIn(o.spec);
    case 'schedule':
      return [o.template, ...refsIn(o.overrides)];
    case 'trigger':
      return [o.template];
    case 'policy':
      return o.templates;
    case 'user':
    case 'team':
    case 'credential':
    case 'inventory':
      return [];
  }
}

const MAX_NAME = 100;
/** `name (imported)`, then `name (imported 2)`…, cut so that it stays a valid name. */
function renamed(name: string, n: number): string {
  const suffix = n === 1 ? ' (imported)' : ` (imported ${n})`;
  return name.slice(0, MAX_NAME - suffix.length).trimEnd() + suffix;
}

export type ApplyResult = Omit<ImportReport, 'format' | 'source_version' | 'dry_run' | 'on_conflict' | 'warnings'>;

export async function applyPlan(w: WriteContext, plan: ImportPlan, onConflict: OnConflict): Promise<ApplyResult> {
  const ids = new Map<string, string>();
  const created: Partial<Record<ImportedKind, number>> = {};
  const updated: Partial<Record<ImportedKind, number>> = {};
  const skipped: ImportSkipped[] = [];
  const needsSecret: string[] = [];
  const usersNeedingPassword: Array<{ id: string; username: string }> = [];
  const count = (m: typeof created, k: ImportedKind) => (m[k] = (m[k] ?? 0) + 1);
  const planned = new Set(plan.objects.map((o) => o.key));

  for (const kind of ORDER) {
    for (const o of plan.objects.filter((x) => x.kind === kind)) {
      const skip = (reason: string) => skipped.push({ kind, name: o.name, reason });
      const missing = dependencies(o).find((k) => !ids.has(k));
      if (missing !== undefined) {
        skip(
          planned.has(missing)
            ? `it needs ${missing}, which was not imported`
            : `it refers to ${missing}, which the export does not hold`,
        );
        continue;
      }
      const writer = WRITERS[kind];
      const table = TABLE[kind];
      let name = o.name.trim();
      const existing = table ? await w.tx.imports.idByName(table, name) : undefined;
      if (existing !== undefined && (onConflict === 'skip' || (kind === 'user' && onConflict === 'rename'))) {
        ids.set(o.key, existing);
        skip(
          kind === 'user' && onConflict === 'rename'
            ? 'a user with this username exists; users are matched by username, never renamed'
            : 'one with this name exists (on_conflict=skip): references point at it',
        );
        continue;
      }
      if (existing !== undefined && onConflict === 'rename') {
        let n = 1;
        while ((await w.tx.imports.idByName(table!, renamed(name, n))) !== undefined) n++;
        name = renamed(name, n);
      }
      const checked = await writer.check(o, name, ids, w);
      if (!checked.ok) {
        skip(checked.reason);
        continue;
      }
      if (existing !== undefined && onConflict === 'update') {
        const leftAlone = await writer.update(w, existing, checked.body, o);
        ids.set(o.key, existing);
        if (leftAlone) skip(leftAlone);
        else count(updated, kind);
        if (kind === 'credential') await noteNeedsSecret(w, existing, needsSecret);
        continue;
      }
      if (writer.find && (await writer.find(w, checked.body))) {
        skip('it is already there');
        continue;
      }
      const id = await writer.insert(w, checked.body, o);
      ids.set(o.key, id);
      count(created, kind);
      if (kind === 'credential') await noteNeedsSecret(w, id, needsSecret);
      if (kind === 'user') usersNeedingPassword.push({ id, username: name });
    }
  }
  return {
    created,
    updated,
    skipped,
    needs_secret: needsSecret,
    users_needing_password: usersNeedingPassword,
    id_map: Object.fromEntries(
      plan.objects
        .filter((o) => ids.has(o.key) && !['membership', 'grant'].includes(o.kind))
        .map((o) => [o.key, ids.get(o.key)!]),
    ),
  };
}

async function noteNeedsSecret(w: WriteContext, id: string, out: string[]): Promise<void> {
  const row = await w.tx.credentials.findById(id);
  if (row && lacksRequiredSecret(row.type as never, openSealedJson(w.keyring, row.secret_inputs_enc))) out.push(id);
}
