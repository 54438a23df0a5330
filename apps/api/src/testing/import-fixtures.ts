// Helpers shared by the import tests: reading fixtures, posting documents, and a snapshot of every table an import
// writes, to prove that a refused or dry-run import left the database as it was.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bearer, type Harness } from './harness.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const SHARED_IMPORT_FIXTURES = path.resolve(REPO_ROOT, '../shared/fixtures/import');
export const IMPORT_FIXTURES = path.resolve(REPO_ROOT, 'test/fixtures/import');

export const fixture = (dir: string, name: string): string => fs.readFileSync(path.join(dir, name), 'utf8');

/** POSTs `text` as the JSON body of an import, as the admin unless a token is given. */
export function postImport(h: Harness, format: string, text: string, query = '', token = h.admin.token) {
  return h.http
    .post(`/v1/import/${format}${query ? `?${query}` : ''}`)
    .set(bearer(token))
    .set('content-type', 'application/json')
    .send(text);
}

const TABLES = [
  'users',
  'teams',
  'team_members',
  'grants',
  'credentials',
  'projects',
  'inventories',
  'inventory_hosts',
  'inventory_sources',
  'templates',
  'schedules',
  'triggers',
  'policies',
  'launch_refs',
  'audit_entries',
] as const;

/** Row counts of every table an import writes (the audit chain included). */
export async function tableCounts(h: Harness): Promise<Record<(typeof TABLES)[number], number>> {
  const out = {} as Record<(typeof TABLES)[number], number>;
  for (const t of TABLES) {
    const r = await h.tdb.db.kysely
      .selectFrom(t)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    out[t] = Number(r.n);
  }
  return out;
}
