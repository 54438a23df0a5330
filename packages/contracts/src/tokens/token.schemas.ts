// Personal API tokens (issue 12, "API tokens"): named bearer tokens for automation (CI jobs, scripts), shown once,
// with a scope (read or write) and an expiry. Sign-in (session) tokens are not listed here.
import { z } from 'zod';
import { idOf, NO_CONTROL_CHARACTERS, PageCursor, PageLimit, Timestamp } from '../common/common.schemas.js';
import { Role } from '../users/user.schemas.js';

export const TOKEN_SCOPES = ['read', 'write'] as const;
export const TokenScope = z
  .enum(TOKEN_SCOPES)
  .meta({ description: '`read`: every operation that changes something answers 403; `write`: what the owner may do' });
export type TokenScope = z.infer<typeof TokenScope>;

/** session: from a sign-in (password, OIDC, SAML); personal: created at POST /v1/tokens. */
export const TOKEN_KINDS = ['session', 'personal'] as const;
export const TokenKind = z.enum(TOKEN_KINDS);
export type TokenKind = z.infer<typeof TokenKind>;

export const TOKEN_MAX_DAYS = 3650;
export const TOKEN_DEFAULT_DAYS = 90;

export const TokenName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(NO_CONTROL_CHARACTERS, 'must not contain control characters')
  .meta({ description: 'what the token is for, 1–100 characters', example: 'ci-deploy' });

export const TokenCreateBody = z
  .strictObject({
    name: TokenName,
    expires_in_days: z
      .number()
      .int()
      .min(1)
      .max(TOKEN_MAX_DAYS)
      .default(TOKEN_DEFAULT_DAYS)
      .meta({ description: `whole days from now, 1–${TOKEN_MAX_DAYS} (default ${TOKEN_DEFAULT_DAYS})` }),
    scope: TokenScope.default('write'),
  })
  .meta({ id: 'TokenCreateBody' });
export type TokenCreateBody = z.infer<typeof TokenCreateBody>;

export const TOKEN_STATUSES = ['active', 'expired', 'owner_demoted'] as const;

export const Token = z
  .object({
    id: z.string(),
    name: z.string(),
    scope: TokenScope,
    user_id: z.string().meta({ description: 'the owner: the token acts as this user, with their current role' }),
    username: z.string(),
    issued_role: Role.meta({
      description: 'the owner’s role when the token was created; should it fall below this, the token stops working',
    }),
    status: z.enum(TOKEN_STATUSES).meta({
      description:
        '`active`; `expired`; `owner_demoted`: the owner’s role is now below `issued_role`, so the token is refused (it works again if the role is restored)',
    }),
    created_at: Timestamp,
    expires_at: Timestamp,
    last_used_at: Timestamp.nullable().meta({
      description: 'when the token last authenticated a request (recorded at most once a minute); null: never',
    }),
  })
  .meta({ id: 'Token' });
export type Token = z.infer<typeof Token>;

/** The answer of create: the only one that carries the secret. */
export const TokenWithSecret = Token.extend({
  token: z.string().meta({ description: 'the bearer token itself, shown only now (`Authorization: Bearer <token>`)' }),
}).meta({ id: 'TokenWithSecret' });
export type TokenWithSecret = z.infer<typeof TokenWithSecret>;

export const TokenIdParams = z.strictObject({ id: idOf('tok') });

export const TokenListQuery = z
  .strictObject({
    limit: PageLimit,
    cursor: PageCursor.optional(),
    user: idOf('usr').optional().meta({ description: 'admins: the tokens of this user (others: only their own id)' }),
    all: z
      .enum(['true', 'false'])
      .optional()
      .meta({ description: 'admins: `true` lists every user’s tokens (default: the caller’s own)' }),
  })
  .refine((q) => !(q.user !== undefined && q.all === 'true'), {
    message: 'give either user or all=true, not both',
    path: ['all'],
  });
export type TokenListQuery = z.infer<typeof TokenListQuery>;
