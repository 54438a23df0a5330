import type { Principal } from './authorize.js';
import type { Authorizer } from './authorize.js';
import { ConflictError } from '../common/errors.js';

/** Something that still references an object (a project using a credential, a source using a project…). */
export interface ObjectUse {
  kind: string;
  id: string;
  name: string;
}

/**
 * The 409 for deleting an object that is still in use. It names the users the caller can see and only counts
 * the others: ids and names of objects the caller has no grant on must not leak (rule 5 of authorize.ts).
 */
export async function inUseConflict(
  p: Principal,
  what: string,
  uses: ObjectUse[],
  authz: Pick<Authorizer, 'levelOn'>,
): Promise<ConflictError | undefined> {
  if (uses.length === 0) return undefined;
  const named: string[] = [];
  for (const u of uses) if ((await authz.levelOn(p, u.id)) !== null) named.push(`${u.kind} ${u.id} (${u.name})`);
  const hidden = uses.length - named.length;
  if (hidden) named.push(`${hidden} more you cannot see`);
  return new ConflictError(`${what} is used by ${named.join(', ')}`);
}
