import type { User } from '@baton/contracts';
import type { UserRow } from '@baton/db';

/** The public shape of a user: never the password hash. */
export function toUser(row: UserRow): User {
  return {
    id: row.id,
    username: row.username,
    role: row.role as User['role'],
    email: row.email,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
