import type { Role } from '@baton/contracts';

/** What each role may do, in a sentence (the authorization rule in core/authz). */
export const ROLE_WORDS: Record<Role, string> = {
  viewer: 'Sees what they are granted; never creates or changes anything.',
  operator: 'Runs and creates; manages what they create and what they are granted manage on.',
  admin: 'May do anything, including users, policies and the audit trail.',
};
