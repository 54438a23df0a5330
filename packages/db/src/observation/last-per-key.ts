import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DialectName } from '../dialect.js';
import type { Schema } from '../schema.js';

export interface LastPerKeyQuery {
  /** the table of keys to walk (e.g. `fleet_hosts fh`) and which of its rows */
  driver: RawBuilder<unknown>;
  driverWhere: RawBuilder<unknown>;
  /** the key of a driver row (e.g. `fh.host`) */
  driverKey: RawBuilder<unknown>;
  table: 'host_runs' | 'task_runs';
  keyColumn: 'host' | 'task_key';
  seqColumn: 'host_seq' | 'task_seq';
  /** which rows count, written over the alias given */
  match: (alias: string) => RawBuilder<unknown>;
  window: number;
}

/**
 * The newest `window` rows of `table` per key that `match`, newest first per key: one index walk per key, backwards
 * along (key, seq) until `window` rows matched, so the cost follows the number of keys and the window, not the
 * history. PostgreSQL does it with LATERAL; SQLite (no LATERAL) finds each key's lowest seq first with a scalar
 * subquery that its planner evaluates once per key and uses as the lower bound of the range on the primary key.
 */
export async function lastPerKey<Row>(db: Kysely<Schema>, dialect: DialectName, q: LastPerKeyQuery): Promise<Row[]> {
  const t = sql.table(q.table);
  const key = (alias: string) => sql.ref(`${alias}.${q.keyColumn}`);
  const seq = (alias: string) => sql.ref(`${alias}.${q.seqColumn}`);
  if (dialect === 'postgres') {
    const { rows } = await sql<Row>`
      select x.* from ${q.driver} cross join lateral (
        select r.* from ${t} r where ${key('r')} = ${q.driverKey} and ${q.match('r')}
        order by ${seq('r')} desc limit ${q.window}
      ) x
      where ${q.driverWhere}
      order by x.${sql.ref(q.keyColumn)}, x.${sql.ref(q.seqColumn)} desc`.execute(db);
    return rows;
  }
  const { rows } = await sql<Row>`
    select r.* from ${q.driver}
    join ${t} r on ${key('r')} = ${q.driverKey} and ${seq('r')} >= coalesce((
      select ${seq('s')} from ${t} s where ${key('s')} = ${q.driverKey} and ${q.match('s')}
      order by ${seq('s')} desc limit 1 offset ${q.window - 1}
    ), 0)
    where ${q.driverWhere} and ${q.match('r')}
    order by ${key('r')}, ${seq('r')} desc`.execute(db);
  return rows;
}
