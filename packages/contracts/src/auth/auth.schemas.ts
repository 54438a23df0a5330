import { z } from 'zod';
import { Timestamp } from '../common/common.schemas.js';
import { TokenKind, TokenScope } from '../tokens/token.schemas.js';
import { Role, User } from '../users/user.schemas.js';

export const LoginBody = z.strictObject({
  username: z.string().min(1).max(256),
  password: z.string().min(1).max(1024),
});
export type LoginBody = z.infer<typeof LoginBody>;

export const LoginResponse = z
  .object({ token: z.string().meta({ description: 'bearer token, shown once' }), expires_at: Timestamp, user: User })
  .meta({ id: 'LoginResponse' });
export type LoginResponse = z.infer<typeof LoginResponse>;

export const CheckResponse = z
  .object({
    valid: z.literal(true),
    user: User,
    role: Role,
    expires_at: Timestamp,
    kind: TokenKind.meta({ description: '`session` (from a sign-in) or `personal` (from POST /v1/tokens)' }),
    scope: TokenScope,
    token_id: z.string().optional().meta({ description: 'personal tokens only' }),
    token_name: z.string().optional().meta({ description: 'personal tokens only' }),
  })
  .meta({ id: 'TokenCheck' });
export type CheckResponse = z.infer<typeof CheckResponse>;
