import type { Kysely } from 'kysely';

// Notifications (issue 17): notifiers; the outbox of run status changes and schedule errors, written in the same
// transaction as the change itself (so a notification is never lost to a crash); one delivery per notifier and
// outbox entry, claimed by one sender at a time with a lease, retried with backoff.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('notifiers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull()) // webhook | slack | email
    .addColumn('config', 'text', (c) => c.notNull()) // JSON: the non-secret settings
    .addColumn('secrets_enc', 'text', (c) => c.notNull()) // sealed JSON: signing secret, headers, slack URL, SMTP password
    .addColumn('events', 'text', (c) => c.notNull()) // JSON array of event names
    .addColumn('match', 'text') // JSON NotifierMatch; null: every run
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('notification_outbox')
    // run:<run id>:<status> or schedule:<schedule id>:<due at>: a change is recorded once, however often it is replayed
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('source', 'text', (c) => c.notNull()) // run | schedule
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull()) // the run's new status, or 'error' for a schedule
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('fanned_out', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('notification_outbox_pending')
    .on('notification_outbox')
    .columns(['fanned_out', 'at'])
    .execute();

  await db.schema
    .createTable('notification_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('notifier_id', 'text', (c) => c.notNull().references('notifiers.id').onDelete('cascade'))
    .addColumn('outbox_id', 'text') // null for a test message
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text')
    .addColumn('message', 'text', (c) => c.notNull()) // JSON: what is sent, built once at fan-out
    .addColumn('status', 'text', (c) => c.notNull()) // pending | retrying | delivered | dead
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('response_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('response_excerpt', 'text')
    .addColumn('claimed_by', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('notification_deliveries_once', ['notifier_id', 'outbox_id'])
    .execute();
  await db.schema
    .createIndex('notification_deliveries_due')
    .on('notification_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('notification_deliveries_by_notifier')
    .on('notification_deliveries')
    .columns(['notifier_id', 'created_at'])
    .execute();
}
