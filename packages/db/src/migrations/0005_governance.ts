import type { Kysely } from 'kysely';

// Governance (issue 12): approval policies and the runs they hold (with the policies as they were when held, and
// every decision), named personal API tokens, and single sign-on: linked external identities, one-time codes that
// hand a browser its token, handshake state any replica can finish, and SAML assertion ids seen (replay refusal).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('policies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('match', 'text', (c) => c.notNull()) // JSON: {projects?, templates?, inventories?, playbooks?, hosts?, check?, origins?, submitted_by_roles?, labels?}
    .addColumn('approvers', 'text', (c) => c.notNull()) // JSON: {roles?, users?, teams?}
    .addColumn('min_approvals', 'integer', (c) => c.notNull())
    .addColumn('expires_after_s', 'integer')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  for (const [column, type] of [
    ['held_by', 'text'], // JSON array of the ids of the policies that hold it
    ['hold_policies', 'text'], // JSON: those policies as they were when the run was held (later edits do not apply)
    ['hold_expires_at', 'text'], // when the earliest-expiring holding policy lets it expire (the sweep rejects it)
  ] as const) {
    await db.schema.alterTable('runs').addColumn(column, type).execute();
  }
  await db.schema.createIndex('runs_hold_idx').on('runs').columns(['status', 'hold_expires_at']).execute();

  // One row per person and run: one person counts once (the primary key), whatever they send.
  await db.schema
    .createTable('run_approvals')
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('decision', 'text', (c) => c.notNull()) // approve | reject
    .addColumn('comment', 'text')
    .addColumn('counts_for', 'text', (c) => c.notNull()) // JSON: ids of the holding policies this approval counts toward
    .addColumn('at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('run_approvals_pk', ['run_id', 'user_id'])
    .execute();

  // Sign-in tokens (kind session) and named personal tokens (kind personal) share one table and one lookup.
  for (const [column, type] of [
    ['kind', 'text'], // session | personal (null: a session token from before this migration)
    ['name', 'text'], // personal tokens only
    ['scope', 'text'], // read | write (null: write)
    ['issued_role', 'text'], // the role the owner had when it was created: demoted below it, the token stops working
    ['last_used_at', 'text'],
  ] as const) {
    await db.schema.alterTable('api_tokens').addColumn(column, type).execute();
  }

  // An external identity (OIDC issuer + subject, or SAML IdP entity id + NameID) linked to the user it created.
  await db.schema
    .createTable('user_identities')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull()) // oidc | saml
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_login_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_identities_pk', ['issuer', 'subject'])
    .execute();
  await db.schema.createIndex('user_identities_user_idx').on('user_identities').column('user_id').execute();

  // Browser sign-in hands over a one-time code, never the token: single use, short-lived, stored as a hash.
  await db.schema
    .createTable('sso_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('method', 'text', (c) => c.notNull()) // oidc | saml
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();

  // Handshake state (OIDC state + nonce + PKCE verifier, SAML AuthnRequest ids), so any replica finishes a sign-in
  // another one started.
  await db.schema
    .createTable('sso_states')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull()) // JSON
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();

  // SAML assertion ids already consumed: a replay is refused on every replica until the assertion expires.
  await db.schema
    .createTable('sso_assertions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['sso_assertions', 'sso_states', 'sso_codes', 'user_identities', 'run_approvals', 'policies'])
    await db.schema.dropTable(t).execute();
  await db.schema.dropIndex('runs_hold_idx').execute();
  for (const c of ['held_by', 'hold_policies', 'hold_expires_at'])
    await db.schema.alterTable('runs').dropColumn(c).execute();
  for (const c of ['kind', 'name', 'scope', 'issued_role', 'last_used_at'])
    await db.schema.alterTable('api_tokens').dropColumn(c).execute();
}
