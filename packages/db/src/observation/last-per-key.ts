import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DialectName } from '../dialect.js';
import type { RunVisibility } from '../runs/run.repo.js';
import type { Schema } from '../schema.js';

/** `column = value`. */
export interface Equality {
  column: string;
  value: string;
}

/**
 * Rows whose `column` holds `value`, walked along an index (column, key, seq) so only matching rows are read; or rows
 * meeting any of several equalities, walked along the primary key (too many arms: see MAX_ARMS).
 */
export type Arm = Equality | { anyOf: readonly Equality[] };

/**
 * Past this many arms (a caller with grants on many projects, inventories and templates), one walk along the primary
 * key that checks them all costs less than an index walk per arm and key; it reads rows the caller may not see too,
 * but with that many grants most rows are ones they may.
 */
export const MAX_ARMS = 16;

/** The indexes (column, key, seq) the migration makes for walks, by table (0006_observation.ts). */
const ARM_INDEXED: Record<KeyedRows['table'], readonly string[]> = {
  host_runs: ['inventory_id', 'project_id', 'playbook', 'submitted_by', 'template_id'],
  task_runs: ['project_id', 'inventory_id', 'submitted_by', 'template_id'],
};

/**
 * `table alias`, on SQLite walking the arm's index (`indexed by`): bound to parameters, its planner (without
 * statistics) may otherwise take the primary key's range from the window's lowest seq up, which holds every
 * submitter's and project's rows since then.
 */
function walked(dialect: DialectName, table: KeyedRows['table'], alias: string, arm: Arm) {
  const t = sql`${sql.table(table)} ${sql.raw(alias)}`;
  if (dialect !== 'sqlite') return t;
  // SQLite names the index of a table's composite primary key after the table.
  if ('anyOf' in arm) return sql`${t} indexed by ${sql.raw(`sqlite_autoindex_${table}_1`)}`;
  if (!ARM_INDEXED[table].includes(arm.column)) throw new Error(`no index to walk ${table} by ${arm.column}`);
  return sql`${t} indexed by ${sql.raw(`${table}_${arm.column}_idx`)}`;
}

/** The rows of `table` numbered per key (host_runs per host, task_runs per task), and the table of keys. */
export interface KeyedRows {
  table: 'host_runs' | 'task_runs';
  keyColumn: 'host' | 'task_key';
  seqColumn: 'host_seq' | 'task_seq';
  /** the table of keys to walk (e.g. `fleet_hosts fh`), which of its rows, and a row's key and count of rows */
  driver: RawBuilder<unknown>;
  driverWhere: RawBuilder<unknown>;
  driverKey: RawBuilder<unknown>;
  driverCount: RawBuilder<unknown>;
}

/** Which rows count: those matching any arm (each walked on its own index) and every residual condition. */
export interface Plan {
  arms: readonly Arm[];
  /**
   * Residual conditions, checked on the rows an arm walks. A key with no row meeting one of them is passed over at
   * once (an index seek), so a host never in the filtered inventory costs no walk through its history.
   */
  rest: readonly Equality[];
}

/**
 * SQL answering `columns` (key and seq among them) of the newest `window` rows of each key that match `plan`
 * (undefined: every row counts), in no order. Never reads more than `window` rows per key and arm, so the cost
 * follows the number of keys, arms and the window, not the length of the history.
 *
 * Every row counting, a key's newest rows are a range of the primary key below its count of rows. Otherwise each arm
 * is one backward walk per key along an index that leads with the arm's column, and a key's answer is the newest
 * `window` of the union of its arms. PostgreSQL walks with LATERAL. SQLite (no LATERAL) finds each key's lowest seq
 * of the window with a scalar subquery its planner evaluates once per key, and reads each arm's index from there up.
 * CROSS JOIN keeps SQLite's join order (keys outside): it has no statistics to choose it by (Baton never runs
 * ANALYZE), and the other way round it reads the whole history.
 */
export function newestRows(
  dialect: DialectName,
  w: KeyedRows,
  plan: Plan | undefined,
  window: number,
  columns: readonly string[],
) {
  const t = sql.table(w.table);
  const key = (alias: string) => sql.ref(`${alias}.${w.keyColumn}`);
  const seq = (alias: string) => sql.ref(`${alias}.${w.seqColumn}`);
  const cols = (alias: string) => sql.join(columns.map((c) => sql.ref(`${alias}.${c}`)));
  if (!plan && dialect === 'postgres')
    // LATERAL keeps PostgreSQL from joining the whole history by hash (it cannot estimate the range below).
    return sql`select ${cols('x')} from ${w.driver} cross join lateral (
        select ${cols('r')} from ${t} r where ${key('r')} = ${w.driverKey} order by ${seq('r')} desc limit ${window}
      ) x where ${w.driverWhere}`;
  if (!plan)
    // The key as the driver's: rows then come in key order, and grouping by it needs no sort.
    return sql`select ${sql.join(
      columns.map((c) => (c === w.keyColumn ? sql`${w.driverKey} as ${sql.ref(c)}` : sql.ref(`r.${c}`))),
    )} from ${w.driver} cross join ${t} r
      where ${w.driverWhere} and ${key('r')} = ${w.driverKey} and ${seq('r')} > ${w.driverCount} - ${window}`;
  if (plan.arms.length === 0) return sql`select ${cols('r')} from ${t} r where 1 = 0`;
  const armOf = (alias: string, arm: Arm) => meets(alias, arm, plan.rest);
  const driverWhere = sql.join(
    [
      w.driverWhere,
      ...plan.rest.map(
        (c) => sql`exists (select 1 from ${t} e where ${allOf('e', [c])} and ${key('e')} = ${w.driverKey})`,
      ),
    ],
    sql` and `,
  );
  if (dialect === 'postgres') {
    const walks = plan.arms.map(
      (arm) => sql`(select ${cols('r')} from ${t} r where ${armOf('r', arm)} and ${key('r')} = ${w.driverKey}
        order by ${seq('r')} desc limit ${window})`,
    );
    // The arms merged newest first as they are read (Merge Append), a row two arms share kept once.
    const newest =
      walks.length === 1
        ? walks[0]!
        : sql`select distinct on (u.${sql.ref(w.seqColumn)}) u.* from (${sql.join(walks, sql` union all `)}) u
            order by u.${sql.ref(w.seqColumn)} desc limit ${window}`;
    return sql`select ${cols('x')} from ${w.driver} cross join lateral (${newest}) x where ${driverWhere}`;
  }
  if (plan.arms.length === 1) {
    const arm = plan.arms[0]!;
    return sql`select ${cols('r')} from ${w.driver} cross join ${walked(dialect, w.table, 'r', arm)}
      where ${driverWhere} and ${armOf('r', arm)} and ${key('r')} = ${w.driverKey}
        and ${seq('r')} >= coalesce((
          select ${seq('s')} from ${walked(dialect, w.table, 's', arm)}
          where ${armOf('s', arm)} and ${key('s')} = ${w.driverKey}
          order by ${seq('s')} desc limit 1 offset ${window - 1}
        ), 0)`;
  }
  // Several arms: first each key's lowest seq of its window, merging the arms' indexes newest first (SQLite merges
  // the parts of an ordered UNION as it reads them, so it stops after `window` seqs in all), then each arm's rows from
  // there up: the union of those is the window, read once.
  const seqsOf = plan.arms.map(
    (arm) => sql`select ${seq('s')} as seq from ${walked(dialect, w.table, 's', arm)}
      where ${armOf('s', arm)} and ${key('s')} = ${w.driverKey}`,
  );
  const lowest = sql`coalesce((${sql.join(seqsOf, sql` union `)} order by seq desc limit 1 offset ${window - 1}), 0)`;
  const walks = plan.arms.map(
    (arm) => sql`select ${cols('r')} from bounds b cross join ${walked(dialect, w.table, 'r', arm)}
      where ${armOf('r', arm)} and ${key('r')} = b.k and ${seq('r')} >= b.lo`,
  );
  return sql`with bounds as materialized (
      select ${w.driverKey} as k, ${lowest} as lo from ${w.driver} where ${driverWhere}
    )
    ${sql.join(walks, sql` union `)}`;
}

/**
 * Runs `read` with the planner settings the walks need on PostgreSQL, in the caller's transaction when there is one
 * (it keeps them for its remaining statements), else in one of its own:
 * - no JIT compilation: a walk over every host or task is estimated at the cost of all its loops, past the thresholds
 *   where PostgreSQL compiles the query to machine code, which took 300–450 ms for queries that run in 10–60 ms;
 * - no bitmap scans: a walk must stop after `window` rows, and a bitmap scan reads all of a key's matching rows and
 *   sorts them, which grows with the history. PostgreSQL chose one where a residual filter (say the inventory, for a
 *   caller walking their projects' runs) looked more selective than it is.
 */
export async function asWalks<T>(
  db: Kysely<Schema>,
  dialect: DialectName,
  read: (db: Kysely<Schema>) => Promise<T>,
): Promise<T> {
  if (dialect !== 'postgres') return read(db);
  const settle = async (trx: Kysely<Schema>) => {
    await sql`set local jit = off`.execute(trx);
    await sql`set local enable_bitmapscan = off`.execute(trx);
  };
  if (db.isTransaction) {
    await settle(db);
    return read(db);
  }
  return db.transaction().execute(async (trx) => {
    await settle(trx);
    return read(trx);
  });
}

/** The newest `window` rows of each key that match `plan` (undefined: every row), newest first per key, in key order. */
export async function lastPerKey<Row>(
  db: Kysely<Schema>,
  dialect: DialectName,
  w: KeyedRows,
  plan: Plan | undefined,
  window: number,
  columns: readonly string[],
): Promise<Row[]> {
  const query = sql<Row>`
    select * from (${newestRows(dialect, w, plan, window, columns)}) n
    order by n.${sql.ref(w.keyColumn)}, n.${sql.ref(w.seqColumn)} desc`;
  return (await asWalks(db, dialect, (d) => query.execute(d))).rows;
}

/**
 * How to walk the rows that meet every equality of `filter` (undefined: no condition) and that the caller may see:
 * for admins, the first equality is the arm and the others are residual; for anyone else, one arm per visibility key
 * (their own runs, and each project, inventory and template they hold a grant on; arms the filter contradicts are
 * dropped) and the filter is residual. Undefined when neither filters: every row counts (no arm to walk).
 */
export function armsOf(filter: Record<string, string | undefined>, visible: RunVisibility): Plan | undefined {
  const given = Object.entries(filter)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([column, value]) => ({ column, value }));
  if (visible === 'all') return given.length === 0 ? undefined : { arms: given.slice(0, 1), rest: given.slice(1) };
  const arms = [
    { column: 'submitted_by', value: visible.submittedBy },
    ...visible.projectIds.map((value) => ({ column: 'project_id', value })),
    ...visible.inventoryIds.map((value) => ({ column: 'inventory_id', value })),
    ...visible.templateIds.map((value) => ({ column: 'template_id', value })),
  ].filter((arm) => !given.some((f) => f.column === arm.column && f.value !== arm.value));
  return { arms: arms.length > MAX_ARMS ? [{ anyOf: arms }] : arms, rest: given };
}

/** `alias.column = value` for each, joined with `and`; true when none. */
export function allOf(alias: string, conditions: readonly Equality[]): RawBuilder<boolean> {
  return conditions.length === 0
    ? sql<boolean>`1 = 1`
    : sql<boolean>`(${sql.join(
        conditions.map((c) => sql`${sql.ref(`${alias}.${c.column}`)} = ${c.value}`),
        sql` and `,
      )})`;
}

/** Rows an arm (undefined: every row) walks and that meet the residual equalities, over `alias`. */
function meets(alias: string, arm: Arm | undefined, rest: readonly Equality[]): RawBuilder<boolean> {
  if (arm === undefined) return allOf(alias, rest);
  if (!('anyOf' in arm)) return allOf(alias, [arm, ...rest]);
  const any = sql.join(
    arm.anyOf.map((e) => allOf(alias, [e])),
    sql` or `,
  );
  return sql<boolean>`${allOf(alias, rest)} and (${any})`;
}

/**
 * One key's newest rows that match any arm (undefined: every row) and `rest`, before `beforeSeq`, at most `limit`:
 * a backward walk per arm, each stopping at `limit` rows.
 */
export async function newestOfKey<Row>(
  db: Kysely<Schema>,
  dialect: DialectName,
  q: {
    table: 'host_runs' | 'task_runs';
    keyColumn: 'host' | 'task_key';
    seqColumn: 'host_seq' | 'task_seq';
    key: string;
    columns: readonly string[];
    arms: readonly Arm[] | undefined;
    rest: readonly Equality[];
    beforeSeq?: number | undefined;
    limit: number;
  },
): Promise<Row[]> {
  if (q.arms?.length === 0) return [];
  const seq = sql.ref(q.seqColumn);
  const walk = (arm: Arm | undefined) => sql`select ${sql.join(q.columns.map((c) => sql.ref(`r.${c}`)))}
    from ${arm ? walked(dialect, q.table, 'r', arm) : sql`${sql.table(q.table)} r`}
    where ${sql.ref(`r.${q.keyColumn}`)} = ${q.key} and ${meets('r', arm, q.rest)}
      and ${q.beforeSeq === undefined ? sql`1 = 1` : sql`${sql.ref(`r.${q.seqColumn}`)} < ${q.beforeSeq}`}
    order by ${sql.ref(`r.${q.seqColumn}`)} desc limit ${q.limit}`;
  if (!q.arms || q.arms.length === 1) {
    const { rows } = await sql<Row>`${walk(q.arms?.[0])}`.execute(db);
    return rows;
  }
  const walks = q.arms.map((arm, i) => sql`select * from (${walk(arm)}) ${sql.ref(`a${i}`)}`);
  const { rows } = await sql<Row>`${sql.join(walks, sql` union `)} order by ${seq} desc limit ${q.limit}`.execute(db);
  return rows;
}
