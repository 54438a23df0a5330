// Composes the import service with both mappers (AWX, Semaphore) and the real ansible-inventory parser.
import {
  type Authorizer,
  type Clock,
  createImportService,
  type InventoryParser,
  type Keyring,
  mapAwxExport,
  mapSemaphoreBackup,
} from '@baton/core';
import type { Database } from '@baton/db';

export function createImportServices(
  db: Database,
  opts: { authz: Authorizer; clock: Clock; keyring: Keyring; parseInventory: InventoryParser },
) {
  return createImportService({
    transaction: db.transaction,
    authz: opts.authz,
    clock: opts.clock,
    keyring: opts.keyring,
    parseInventory: opts.parseInventory,
    // The AWX mapper reads "now" to tell schedules that start in the future.
    mappers: { awx: (doc) => mapAwxExport(opts.clock())(doc), semaphore: mapSemaphoreBackup },
  });
}
