import { type Kysely, sql } from 'kysely';
import type { Schema } from '../schema.js';

/**
 * Every column that holds a value encrypted under the master key. `baton key rotate` re-encrypts exactly
 * these, so a domain that stores a secret adds its column here in the same change.
 */
export const ENCRYPTED_COLUMNS: ReadonlyArray<{ table: string; key: string; column: string }> = [
  { table: 'server_keys', key: 'purpose', column: 'private_key_enc' },
];

export function createSecretColumnRepo(db: Kysely<Schema>) {
  return {
    /** Rewrites every encrypted value with `reencrypt`; returns how many values changed. */
    async reencryptAll(reencrypt: (ciphertext: string) => string): Promise<number> {
      let changed = 0;
      for (const { table, key, column } of ENCRYPTED_COLUMNS) {
        const rows = await sql<{ k: string; v: string | null }>`select ${sql.ref(key)} as k, ${sql.ref(column)} as v from ${sql.table(table)}`.execute(db);
        for (const row of rows.rows) {
          if (row.v === null) continue;
          const next = reencrypt(row.v);
          if (next === row.v) continue;
          await sql`update ${sql.table(table)} set ${sql.ref(column)} = ${next} where ${sql.ref(key)} = ${row.k}`.execute(db);
          changed++;
        }
      }
      return changed;
    },
  };
}
export type SecretColumnRepo = ReturnType<typeof createSecretColumnRepo>;
