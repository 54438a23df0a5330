import { z } from 'zod';
import { idOf, Timestamp, ObjectName } from '../common/common.schemas.js';
import { Role } from '../users/user.schemas.js';

export const TeamCreateBody = z.strictObject({
  name: ObjectName,
});
export const Team = z
  .object({ id: z.string(), name: z.string(), created_at: Timestamp, created_by: z.string() })
  .meta({ id: 'Team' });

export const TeamMemberAddBody = z.strictObject({ user_id: idOf('usr') });
export const TeamMember = z
  .object({ user_id: z.string(), username: z.string(), role: Role, added_at: Timestamp })
  .meta({ id: 'TeamMember' });
/** Path parameters are well-formed ids: a malformed one is a 400 naming the parameter, never a database error. */
export const TeamIdParams = z.strictObject({ id: idOf('team') });
export const TeamMemberParams = z.strictObject({ id: idOf('team'), userID: idOf('usr') });
