import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('credentials')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('public_inputs', 'text', (c) => c.notNull()) // JSON: the non-secret fields
    .addColumn('secret_inputs_enc', 'text', (c) => c.notNull()) // JSON of the secret fields, sealed under the master key
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('projects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('git_url', 'text', (c) => c.notNull())
    .addColumn('branch', 'text', (c) => c.notNull())
    .addColumn('credential_id', 'text', (c) => c.references('credentials.id'))
    .addColumn('last_commit', 'text')
    .addColumn('synced_at', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('projects_credential_idx').on('projects').column('credential_id').execute();

  await db.schema
    .createTable('inventories')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('format', 'text', (c) => c.notNull()) // ini | yaml | json
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('groups', 'text', (c) => c.notNull()) // JSON: [{name, hosts, children}]
    .addColumn('host_count', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('inventory_hosts')
    .addColumn('inventory_id', 'text', (c) => c.notNull().references('inventories.id').onDelete('cascade'))
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('groups', 'text', (c) => c.notNull()) // JSON array of group names
    .addPrimaryKeyConstraint('inventory_hosts_pk', ['inventory_id', 'host'])
    .execute();
  await db.schema.createIndex('inventory_hosts_host_idx').on('inventory_hosts').column('host').execute();

  await db.schema
    .createTable('inventory_sources')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull()) // script | plugin | url
    .addColumn('inventory_id', 'text', (c) => c.notNull().references('inventories.id'))
    .addColumn('project_id', 'text', (c) => c.references('projects.id'))
    .addColumn('path', 'text')
    .addColumn('url', 'text')
    .addColumn('credential_id', 'text', (c) => c.references('credentials.id'))
    .addColumn('refresh_interval_s', 'integer')
    .addColumn('refreshed_at', 'text')
    .addColumn('host_count', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  for (const col of ['inventory_id', 'project_id', 'credential_id'] as const) {
    await db.schema.createIndex(`inventory_sources_${col}_idx`).on('inventory_sources').column(col).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['inventory_sources', 'inventory_hosts', 'inventories', 'projects', 'credentials'])
    await db.schema.dropTable(t).execute();
}
