import type { Kysely } from 'kysely';

// Host trust (issue 18): SSH host keys per inventory and per project (the policy on the owner, the keys in
// known_hosts, each recorded by a run on first contact or pinned by a user), and a project's Galaxy credential.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['inventories', 'projects'])
    await db.schema
      .alterTable(table)
      .addColumn('host_key_checking', 'text', (c) => c.notNull().defaultTo('accept_new'))
      .execute();
  await db.schema.alterTable('projects').addColumn('galaxy_credential_id', 'text').execute();

  await db.schema
    .createTable('known_hosts')
    .addColumn('scope', 'text', (c) => c.notNull()) // inventory | project
    .addColumn('scope_id', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull()) // name or [name]:port, as ssh writes it
    .addColumn('key_type', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull()) // base64 blob
    .addColumn('source', 'text', (c) => c.notNull()) // recorded | pinned
    .addColumn('run_id', 'text') // the run that recorded it
    .addColumn('created_by', 'text') // the user who pinned it
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('known_hosts_pk', ['scope', 'scope_id', 'host', 'key_type'])
    .execute();
}
