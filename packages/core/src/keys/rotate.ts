import type { SecretColumnRepo } from '@baton/db';
import type { Keyring } from '../crypto/secret-box.js';
import { ValidationError } from '../common/errors.js';
import { recordAudit } from '../audit/audit.chain.js';
import type { Clock } from '../common/clock.js';
import type { AuditRepo } from '@baton/db';

/**
 * Start-up check: the keyring must open what is stored. Starting with the wrong master key would otherwise
 * surface much later, as a failure of whatever first needs a secret.
 */
export async function assertKeyringOpensSecrets(
  secretColumns: Pick<SecretColumnRepo, 'samples'>,
  ring: Keyring,
): Promise<void> {
  for (const s of await secretColumns.samples()) {
    try {
      ring.decrypt(s.value);
    } catch (err) {
      throw new ValidationError(
        `the master key cannot open stored secrets (${s.table}.${s.column}: ${(err as Error).message}); start with the key they were sealed under`,
      );
    }
  }
}

/**
 * Re-seals every encrypted value under `ring.current` in one transaction: either all values move to the
 * new key or none does. `ring` must also hold the old key(s) to open the existing values.
 */
export async function resealAllSecrets(deps: {
  transaction: <T>(
    fn: (r: { secretColumns: Pick<SecretColumnRepo, 'reencryptAll'>; audit: Pick<AuditRepo, 'append'> }) => Promise<T>,
  ) => Promise<T>;
  ring: Keyring;
  clock: Clock;
  actor: string;
}): Promise<number> {
  return deps.transaction(async (r) => {
    const changed = await r.secretColumns.reencryptAll((v) => deps.ring.reseal(v));
    await recordAudit(
      r.audit,
      {
        actor: deps.actor,
        action: 'master_key.rotate',
        object: null,
        summary: `re-encrypted ${changed} secret value(s) under master key ${deps.ring.current.kid}`,
      },
      deps.clock,
    );
    return changed;
  });
}
