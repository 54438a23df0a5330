import type { Kysely } from 'kysely';

// Advisory AI helpers (issue 15): the provider settings an admin stores (the key sealed under the master key), the
// explanation kept per run (POST /v1/runs/{id}/explain answers it until ?refresh=true), and the request and rationale
// behind each run the AI proposed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('ai_settings')
    .addColumn('id', 'text', (c) => c.primaryKey()) // one row: 'default'
    .addColumn('provider', 'text', (c) => c.notNull()) // openai | anthropic
    .addColumn('base_url', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('api_key_enc', 'text') // sealed like credentials; null: no key (a local server)
    .addColumn('timeout_s', 'integer', (c) => c.notNull())
    .addColumn('max_output_tokens', 'integer', (c) => c.notNull())
    .addColumn('updated_by', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('ai_explanations')
    .addColumn('run_id', 'text', (c) => c.primaryKey().references('runs.id').onDelete('cascade'))
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('likely_causes', 'text', (c) => c.notNull()) // JSON array of strings
    .addColumn('suggested_fixes', 'text', (c) => c.notNull()) // JSON array of strings
    .addColumn('cited_events', 'text', (c) => c.notNull()) // JSON array of event seqs, each one of the run's
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('generated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('ai_proposals')
    .addColumn('run_id', 'text', (c) => c.primaryKey().references('runs.id').onDelete('cascade'))
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('proposal', 'text', (c) => c.notNull()) // JSON: the proposal as validated (RunProposal)
    .addColumn('proposed_by', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['ai_proposals', 'ai_explanations', 'ai_settings']) await db.schema.dropTable(table).execute();
}
