import type { Kysely, Selectable } from 'kysely';
import { type Decoded, jsonColumns } from '../json-columns.js';
import type { AiExplanationTable, AiProposalTable, AiSettingsTable, Schema } from '../schema.js';

const SETTINGS_ID = 'default';

export type AiSettingsRow = Omit<Selectable<AiSettingsTable>, 'id'>;

type ExplanationJson = { likely_causes: string[]; suggested_fixes: string[]; cited_events: number[] };
const explanationJson = jsonColumns<ExplanationJson>({
  likely_causes: true,
  suggested_fixes: true,
  cited_events: true,
});
export type AiExplanationRow = Decoded<Selectable<AiExplanationTable>, ExplanationJson>;

type ProposalJson = { proposal: Record<string, unknown> };
const proposalJson = jsonColumns<ProposalJson>({ proposal: true });
export type AiProposalRow = Decoded<Selectable<AiProposalTable>, ProposalJson>;

/** The stored AI provider settings, each run's explanation, and the proposals behind the runs the AI proposed. */
export function createAiRepo(db: Kysely<Schema>) {
  return {
    async settings(): Promise<AiSettingsRow | undefined> {
      const row = await db.selectFrom('ai_settings').selectAll().where('id', '=', SETTINGS_ID).executeTakeFirst();
      if (!row) return undefined;
      const { id: _id, ...rest } = row;
      return rest;
    },
    async putSettings(row: AiSettingsRow): Promise<void> {
      await db
        .insertInto('ai_settings')
        .values({ id: SETTINGS_ID, ...row })
        .onConflict((oc) => oc.column('id').doUpdateSet(row))
        .execute();
    },
    /** True when there were settings to remove. */
    async deleteSettings(): Promise<boolean> {
      const r = await db.deleteFrom('ai_settings').where('id', '=', SETTINGS_ID).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    async explanation(runId: string): Promise<AiExplanationRow | undefined> {
      const row = await db.selectFrom('ai_explanations').selectAll().where('run_id', '=', runId).executeTakeFirst();
      return row && explanationJson.decode(row);
    },
    /** Stores the run's explanation, replacing the one before (a refresh). */
    async putExplanation(row: AiExplanationRow): Promise<void> {
      const encoded = explanationJson.encode(row);
      const { run_id: _runId, ...update } = encoded;
      await db
        .insertInto('ai_explanations')
        .values(encoded)
        .onConflict((oc) => oc.column('run_id').doUpdateSet(update))
        .execute();
    },

    async insertProposal(row: AiProposalRow): Promise<void> {
      await db.insertInto('ai_proposals').values(proposalJson.encode(row)).execute();
    },
    async proposal(runId: string): Promise<AiProposalRow | undefined> {
      const row = await db.selectFrom('ai_proposals').selectAll().where('run_id', '=', runId).executeTakeFirst();
      return row && proposalJson.decode(row);
    },
  };
}
export type AiRepo = ReturnType<typeof createAiRepo>;
