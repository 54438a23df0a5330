export * from './common/common.schemas.js';
export * from './auth/auth.schemas.js';
export * from './users/user.schemas.js';
export * from './teams/team.schemas.js';
export * from './grants/grant.schemas.js';
export * from './audit/audit.schemas.js';
