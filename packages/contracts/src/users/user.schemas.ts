import { z } from 'zod';
import { idOf, Timestamp } from '../common/common.schemas.js';

export const ROLES = ['admin', 'operator', 'viewer'] as const;
export const Role = z.enum(ROLES);
export type Role = z.infer<typeof Role>;

export const PASSWORD_MIN_LENGTH = 12;
export const Password = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `must be at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(1024);
export const Username = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]*$/, 'letters, digits and . _ @ - only, starting with a letter or digit');

export const UserCreateBody = z.strictObject({
  username: Username,
  password: Password,
  role: Role,
  email: z.email().max(254).optional(),
});
export type UserCreateBody = z.infer<typeof UserCreateBody>;

export const UserUpdateBody = z
  .strictObject({
    role: Role.optional(),
    password: Password.optional(),
    email: z.email().max(254).nullable().optional(),
  })
  .refine((b) => b.role !== undefined || b.password !== undefined || b.email !== undefined, {
    message: 'give at least one of role, password, email',
  });
export type UserUpdateBody = z.infer<typeof UserUpdateBody>;

/** `{id}` of /users/{id}: a well-formed user id, so a malformed one is a 400 naming `path.id`, never a database error. */
export const UserIdParams = z.strictObject({ id: idOf('usr') });

export const User = z
  .object({
    id: z.string(),
    username: z.string(),
    role: Role,
    email: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'User' });
export type User = z.infer<typeof User>;
