import type { Kysely, Selectable } from 'kysely';
import { refusingDuplicates } from '../errors.js';
import type { RunApprovalTable, Schema } from '../schema.js';

/** A decision on a held run; `counts_for` lists the holding policies it counts toward. */
export type RunApprovalRow = Omit<Selectable<RunApprovalTable>, 'counts_for'> & { counts_for: string[] };

const decode = (row: Selectable<RunApprovalTable>): RunApprovalRow => ({
  ...row,
  counts_for: JSON.parse(row.counts_for) as string[],
});

export function createRunApprovalRepo(db: Kysely<Schema>) {
  return {
    /** One decision per person and run: a second one is a DuplicateKeyError. */
    async insert(row: RunApprovalRow): Promise<void> {
      await refusingDuplicates(
        db
          .insertInto('run_approvals')
          .values({ ...row, counts_for: JSON.stringify(row.counts_for) })
          .execute(),
      );
    },
    /** The decisions on these runs, oldest first. */
    async forRuns(runIds: readonly string[]): Promise<RunApprovalRow[]> {
      if (runIds.length === 0) return [];
      const rows = await db
        .selectFrom('run_approvals')
        .selectAll()
        .where('run_id', 'in', [...runIds])
        .orderBy('at', 'asc')
        .orderBy('user_id', 'asc')
        .execute();
      return rows.map(decode);
    },
  };
}
export type RunApprovalRepo = ReturnType<typeof createRunApprovalRepo>;
