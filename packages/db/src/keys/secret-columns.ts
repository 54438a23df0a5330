import { type Kysely, sql } from 'kysely';
import type { Schema } from '../schema.js';

/**
 * Every column that holds a value encrypted under the master key. `baton key rotate` re-encrypts exactly
 * these, so a domain that stores a secret adds its column here in the same change.
 */
export const ENCRYPTED_COLUMNS: ReadonlyArray<{ table: string; key: string; column: string }> = [
  { table: 'server_keys', key: 'purpose', column: 'private_key_enc' },
  { table: 'credentials', key: 'id', column: 'secret_inputs_enc' },
  { table: 'runs', key: 'id', column: 'secret_vars_enc' },
  { table: 'templates', key: 'id', column: 'secret_defaults_enc' },
  { table: 'schedules', key: 'id', column: 'target_secrets_enc' },
  { table: 'triggers', key: 'id', column: 'secret_enc' },
  { table: 'triggers', key: 'id', column: 'target_secrets_enc' },
  { table: 'ai_settings', key: 'id', column: 'api_key_enc' },
  { table: 'notifiers', key: 'id', column: 'secrets_enc' },
];

export function createSecretColumnRepo(db: Kysely<Schema>) {
  return {
    /** One stored value per encrypted column (where there is any): enough to check a key opens them. */
    async samples(): Promise<Array<{ table: string; column: string; value: string }>> {
      const out: Array<{ table: string; column: string; value: string }> = [];
      for (const { table, column } of ENCRYPTED_COLUMNS) {
        const r = await sql<{
          v: string;
        }>`select ${sql.ref(column)} as v from ${sql.table(table)} where ${sql.ref(column)} is not null limit 1`.execute(
          db,
        );
        if (r.rows[0]) out.push({ table, column, value: r.rows[0].v });
      }
      return out;
    },
    /** Rewrites every encrypted value with `reencrypt`; returns how many values changed. */
    async reencryptAll(reencrypt: (ciphertext: string) => string): Promise<number> {
      let changed = 0;
      for (const { table, key, column } of ENCRYPTED_COLUMNS) {
        const rows = await sql<{
          k: string;
          v: string | null;
        }>`select ${sql.ref(key)} as k, ${sql.ref(column)} as v from ${sql.table(table)}`.execute(db);
        for (const row of rows.rows) {
          if (row.v === null) continue;
          const next = reencrypt(row.v);
          if (next === row.v) continue;
          await sql`update ${sql.table(table)} set ${sql.ref(column)} = ${next} where ${sql.ref(key)} = ${row.k}`.execute(
            db,
          );
          changed++;
        }
      }
      return changed;
    },
  };
}
export type SecretColumnRepo = ReturnType<typeof createSecretColumnRepo>;
