import { z } from 'zod';
import { AnyId, idOf, ListQuery, Timestamp } from '../common/common.schemas.js';

export const GRANT_LEVELS = ['use', 'manage'] as const;
export const GrantLevel = z.enum(GRANT_LEVELS);
export type GrantLevel = z.infer<typeof GrantLevel>;

export const GrantCreateBody = z.strictObject({
  subject: z.string().regex(/^(usr|team)_[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a user (usr_…) or team (team_…) id'),
  object: AnyId,
  level: GrantLevel,
});
export const Grant = z
  .object({
    id: z.string(),
    subject: z.string(),
    object: z.string(),
    level: GrantLevel,
    created_at: Timestamp,
    created_by: z.string(),
  })
  .meta({ id: 'Grant' });
/** Path parameter of /grants/{id}: a well-formed grant id. */
export const GrantIdParams = z.strictObject({ id: idOf('grant') });
/** Filters are ids too: anything else (a NUL byte, say) is a 400, never a database error. */
export const GrantListQuery = ListQuery.extend({ subject: AnyId.optional(), object: AnyId.optional() });
