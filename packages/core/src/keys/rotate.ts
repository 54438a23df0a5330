import type { SecretColumnRepo } from '@baton/db';
import type { Keyring } from '../crypto/secret-box.js';
import { recordAudit } from '../audit/audit.chain.js';
import type { Clock } from '../common/clock.js';
import type { AuditRepo } from '@baton/db';

/**
 * Re-seals every encrypted value under `ring.current` in one transaction: either all values move to the
 * new key or none does. `ring` must also hold the old key(s) to open the existing values.
 */
export async function resealAllSecrets(deps: {
  transaction: <T>(fn: (r: { secretColumns: Pick<SecretColumnRepo, 'reencryptAll'>; audit: Pick<AuditRepo, 'append'> }) => Promise<T>) => Promise<T>;
  ring: Keyring;
  clock: Clock;
  actor: string;
}): Promise<number> {
  return deps.transaction(async (r) => {
    const changed = await r.secretColumns.reencryptAll((v) => deps.ring.reseal(v));
    await recordAudit(r.audit, {
      actor: deps.actor,
      action: 'master_key.rotate',
      object: null,
      summary: `re-encrypted ${changed} secret value(s) under master key ${deps.ring.current.kid}`,
    }, deps.clock);
    return changed;
  });
}
