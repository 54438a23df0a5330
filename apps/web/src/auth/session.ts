// The signed-in session. The token lives in sessionStorage (not a cookie: no CSRF surface) and never in a URL.
import type { Role, User } from '@baton/contracts';

const TOKEN_KEY = 'baton.token';
const RETURN_KEY = 'baton.return_to';
const NOTICE_KEY = 'baton.signin_notice';

export interface SessionUser {
  user: User;
  role: Role;
  expires_at: string;
}

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  setToken: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
  /** where to go back to after signing in again */
  rememberPage: (path: string): void => sessionStorage.setItem(RETURN_KEY, path),
  takeReturnPage: (): string | null => {
    const p = sessionStorage.getItem(RETURN_KEY);
    sessionStorage.removeItem(RETURN_KEY);
    return p;
  },
  /** a message for the sign-in page, e.g. why the user is back there */
  setNotice: (text: string): void => sessionStorage.setItem(NOTICE_KEY, text),
  takeNotice: (): string | null => {
    const n = sessionStorage.getItem(NOTICE_KEY);
    sessionStorage.removeItem(NOTICE_KEY);
    return n;
  },
};
