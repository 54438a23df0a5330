// The signed-in session. The token lives in sessionStorage (not a cookie: no CSRF surface) and never in a URL.
import type { Role, User } from '@baton/contracts';

const TOKEN_KEY = 'baton.token';
const RETURN_KEY = 'baton.return_to';
const NOTICE_KEY = 'baton.signin_notice';
const USER_KEY = 'baton.user';

export interface SessionUser {
  user: User;
  role: Role;
  expires_at: string;
}

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  setToken: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  clear: (): void => {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(USER_KEY);
  },
  /**
   * Who the token belonged to at its last check: a reload shows the page at once while the token is checked
   * again in the background (a 401 then still ends the session).
   */
  cachedUser: (): SessionUser | null => {
    try {
      const raw = sessionStorage.getItem(USER_KEY);
      return raw ? (JSON.parse(raw) as SessionUser) : null;
    } catch {
      return null;
    }
  },
  setCachedUser: (user: SessionUser): void => sessionStorage.setItem(USER_KEY, JSON.stringify(user)),
  /** where to go back to after signing in again */
  rememberPage: (path: string): void => sessionStorage.setItem(RETURN_KEY, path),
  takeReturnPage: (): string | null => {
    const p = sessionStorage.getItem(RETURN_KEY);
    sessionStorage.removeItem(RETURN_KEY);
    return p;
  },
  /** a message for the sign-in page, e.g. why the user is back there */
  setNotice: (text: string): void => sessionStorage.setItem(NOTICE_KEY, text),
  notice: (): string | null => sessionStorage.getItem(NOTICE_KEY),
  clearNotice: (): void => sessionStorage.removeItem(NOTICE_KEY),
};
