// Each host's newest outcomes per visibility key (fleet_windows, 0007_fleet_windows.ts), and over every run, kept at
// ingest so ranking the unfiltered fleet reads one short row per host and key the caller sees runs through (their
// own, their grants; every run for admins) instead of walking an index per host and key. A row's `ring` is that
// key's newest runs on the host, newest first, as fixed-width entries: the host's seq (base 36, fixed width: as
// strings they sort as numbers) and one letter for the outcome.
import { type Kysely, sql } from 'kysely';
import type { DialectName } from '../dialect.js';
import type { RunVisibility } from '../runs/run.repo.js';
import type { Schema } from '../schema.js';

/** How many runs a ring keeps per key and host: the largest fleet window (MAX_FLEET_WINDOW in @baton/contracts). */
export const FLEET_WINDOW_RUNS = 200;

/** The visibility columns a run is seen through (the runs domain's rule), each a kind of ring. */
export const WINDOW_KINDS = ['submitted_by', 'project_id', 'inventory_id', 'template_id'] as const;
/** The ring of every run on a host (what admins see): kind `all`, value `*`. */
const ALL = { kind: 'all', value: '*' } as const;
export type WindowKind = (typeof WINDOW_KINDS)[number] | typeof ALL.kind;

const SEQ_CHARS = 6;
const ENTRY_CHARS = SEQ_CHARS + 1;
/** 36^6: past this a seq no longer fits its entry (over two billion runs on one host). */
const SEQ_LIMIT = 36 ** SEQ_CHARS;
const RING_CHARS = FLEET_WINDOW_RUNS * ENTRY_CHARS;

const CODE_OF: Record<string, string> = { ok: 'o', changed: 'c', failed: 'f', unreachable: 'u' };

/** One run's entry in a ring (an outcome without a letter counts as a run, in none of the four counts). */
function entryOf(seq: number, outcome: string): string {
  const code = CODE_OF[outcome] ?? '?';
  if (!Number.isInteger(seq) || seq < 1 || seq >= SEQ_LIMIT) throw new Error(`host seq ${seq} does not fit a ring`);
  return seq.toString(36).padStart(SEQ_CHARS, '0') + code;
}

/** A run as the rings need it. */
export interface WindowRun {
  host: string;
  host_seq: number;
  outcome: string;
  finished_at: string;
  submitted_by: string;
  project_id: string | null;
  inventory_id: string | null;
  template_id: string | null;
}

/** A ring row: this key's newest runs on the host, newest first, and when the newest finished. */
export interface WindowRow {
  kind: WindowKind;
  value: string;
  host: string;
  ring: string;
  newest_at: string;
}

/** The rows `runs` make, on their own (a new key's whole ring, or what to put in front of a stored one). */
export function windowRowsOf(runs: Iterable<WindowRun>): WindowRow[] {
  const rows = new Map<string, WindowRow & { newestSeq: number; seqs: Array<[number, string]> }>();
  for (const r of runs)
    for (const [kind, value] of [...WINDOW_KINDS.map((k) => [k, r[k]] as const), [ALL.kind, ALL.value] as const]) {
      if (value === null) continue;
      const id = `${kind}\u0000${value}\u0000${r.host}`;
      let row = rows.get(id);
      if (!row) rows.set(id, (row = { kind, value, host: r.host, ring: '', newest_at: '', newestSeq: 0, seqs: [] }));
      row.seqs.push([r.host_seq, entryOf(r.host_seq, r.outcome)]);
      if (r.host_seq > row.newestSeq) {
        row.newestSeq = r.host_seq;
        row.newest_at = r.finished_at;
      }
    }
  return [...rows.values()].map(({ seqs, newestSeq: _, ...row }) => ({
    ...row,
    ring: seqs
      .sort((a, b) => b[0] - a[0])
      .slice(0, FLEET_WINDOW_RUNS)
      .map(([, e]) => e)
      .join(''),
  }));
}

const CHUNK = 100;

/**
 * Puts the rows of runs just numbered in front of the stored rings, cut to FLEET_WINDOW_RUNS. The runs are newer
 * than any stored: a host's seqs are handed out under its fleet_hosts row's lock, in this same transaction.
 */
export async function recordWindows(db: Kysely<Schema>, runs: Iterable<WindowRun>): Promise<void> {
  const rows = windowRowsOf(runs);
  for (let i = 0; i < rows.length; i += CHUNK)
    await db
      .insertInto('fleet_windows')
      .values(rows.slice(i, i + CHUNK))
      .onConflict((oc) =>
        oc.columns(['kind', 'value', 'host']).doUpdateSet((eb) => ({
          ring: sql<string>`substr(excluded.ring || fleet_windows.ring, 1, ${sql.lit(RING_CHARS)})`,
          newest_at: eb.ref('excluded.newest_at'),
        })),
      )
      .execute();
}

/** A host's newest runs the caller may see, counted by outcome. */
export interface WindowCounts {
  host: string;
  runs: number;
  ok: number;
  changed: number;
  failed: number;
  unreachable: number;
  last_seen_at: string;
}

/**
 * Each host's newest `window` runs that `visible` sees (only `hosts` when given), counted by outcome: for admins, the
 * ring of every run; for anyone else, the rings of their keys. A host's
 * window is the newest `window` of the union of its keys' rings: a run among them is among the newest `window` of
 * every key it is seen through. A run seen through two keys (the caller's own run on a project they hold a grant on)
 * is in both rings with the same seq, and counts once.
 */
export async function windowCounts(
  db: Kysely<Schema>,
  dialect: DialectName,
  visible: RunVisibility,
  window: number,
  hosts?: readonly string[],
): Promise<WindowCounts[]> {
  if (hosts?.length === 0) return [];
  const values: Record<WindowKind, string[]> =
    visible === 'all'
      ? { all: [ALL.value], submitted_by: [], project_id: [], inventory_id: [], template_id: [] }
      : {
          all: [],
          submitted_by: [visible.submittedBy],
          project_id: visible.projectIds,
          inventory_id: visible.inventoryIds,
          template_id: visible.templateIds,
        };
  // One primary-key range per key, reading only the window's part of each ring.
  const ranges = ([ALL.kind, ...WINDOW_KINDS] as const)
    .filter((kind) => values[kind].length > 0)
    .map(
      (kind) => sql`select w.host, substr(w.ring, 1, ${sql.lit(window * ENTRY_CHARS)}) as ring, w.newest_at
      from fleet_windows w
      where w.kind = ${kind} and w.value in (${sql.join(values[kind])})
        ${hosts ? sql`and w.host in (${sql.join([...hosts])})` : sql``}`,
    );
  const query = sql<Pick<WindowRow, 'host' | 'ring' | 'newest_at'>>`${sql.join(ranges, sql` union all `)}`;
  const { rows } = await serially(db, dialect, (d) => query.execute(d));
  const byHost = new Map<string, Array<Pick<WindowRow, 'ring' | 'newest_at'>>>();
  for (const r of rows) {
    const list = byHost.get(r.host);
    if (list) list.push(r);
    else byHost.set(r.host, [r]);
  }
  return [...byHost].map(([host, rings]) => countOf(host, rings, window));
}

/**
 * Runs `read` without parallel workers on PostgreSQL (in the caller's transaction, or one of its own): it reads the
 * rings of a few thousand hosts, ~1,000 pages it has in memory, in ~6 ms; with the two workers it plans for them,
 * 9–10 ms (starting them costs more than they share).
 */
async function serially<T>(db: Kysely<Schema>, dialect: DialectName, read: (db: Kysely<Schema>) => Promise<T>) {
  if (dialect !== 'postgres') return read(db);
  const run = async (trx: Kysely<Schema>) => {
    await sql`set local max_parallel_workers_per_gather = 0`.execute(trx);
    return read(trx);
  };
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}

/** Merges a host's rings newest first (each is newest first), a seq in several once, and counts the first `window`. */
function countOf(host: string, rings: ReadonlyArray<Pick<WindowRow, 'ring' | 'newest_at'>>, window: number) {
  const c: WindowCounts = { host, runs: 0, ok: 0, changed: 0, failed: 0, unreachable: 0, last_seen_at: '' };
  const at = rings.map(() => 0);
  const seqAt = (k: number) => rings[k]!.ring.slice(at[k]!, at[k]! + SEQ_CHARS);
  let newest = '';
  for (let k = 0; k < rings.length; k++)
    if (seqAt(k) > newest) {
      newest = seqAt(k);
      c.last_seen_at = rings[k]!.newest_at;
    }
  while (c.runs < window) {
    let next = '';
    for (let k = 0; k < rings.length; k++) if (at[k]! < rings[k]!.ring.length && seqAt(k) > next) next = seqAt(k);
    if (next === '') break;
    let code = '';
    for (let k = 0; k < rings.length; k++)
      if (at[k]! < rings[k]!.ring.length && seqAt(k) === next) {
        code = rings[k]!.ring[at[k]! + SEQ_CHARS]!;
        at[k] = at[k]! + ENTRY_CHARS;
      }
    c.runs++;
    if (code === 'o') c.ok++;
    else if (code === 'c') c.changed++;
    else if (code === 'f') c.failed++;
    else if (code === 'u') c.unreachable++;
  }
  return c;
}
