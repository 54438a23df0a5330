import crypto from 'node:crypto';
import type { UserRepo } from '@baton/db';
import { ConflictError } from '../common/errors.js';
import type { UserService } from './user.service.js';

/**
 * First start: when there is no user at all, create `admin` with role admin. The password comes from
 * configuration, or is generated and returned so the caller can print it once.
 */
export async function ensureInitialAdmin(deps: {
  users: Pick<UserRepo, 'countByRole'>;
  userService: Pick<UserService, 'createAs'>;
  password?: string | undefined;
}): Promise<{ created: false } | { created: true; generatedPassword?: string }> {
  const counts = await deps.users.countByRole();
  if (Object.values(counts).some((n) => n > 0)) return { created: false };
  const generated = deps.password === undefined ? crypto.randomBytes(18).toString('base64url') : undefined;
  try {
    await deps.userService.createAs('system', {
      username: 'admin',
      password: deps.password ?? generated!,
      role: 'admin',
    });
  } catch (err) {
    // Another replica created it first.
    if (err instanceof ConflictError) return { created: false };
    throw err;
  }
  return generated ? { created: true, generatedPassword: generated } : { created: true };
}
