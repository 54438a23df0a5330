// Who is signed in, and the ways in and out. Every page below <AuthGate> has a user.
import type { CheckResponse, LoginResponse, Role } from '@baton/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { useLocation } from 'wouter';
import { ApiError, request, setUnauthenticatedHandler } from '../api/client';
import { session, type SessionUser } from './session';

interface AuthState {
  me: SessionUser | null;
  /** true until the stored token (if any) has been checked */
  checking: boolean;
  signedIn(answer: { token: string } & Partial<Pick<LoginResponse, 'user' | 'expires_at'>>): Promise<void>;
  signOut(): Promise<void>;
}

const AuthContext = createContext<AuthState | null>(null);

export function useAuth(): AuthState {
  const ctx = useContext(AuthContext);
  if (!ctx) throw new Error('useAuth outside <AuthProvider>');
  return ctx;
}

/** The signed-in user; only for pages under <AuthGate>. */
export function useMe(): SessionUser {
  const { me } = useAuth();
  if (!me) throw new Error('useMe on a page that does not require sign-in');
  return me;
}

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };
/** Whether the signed-in user's role is at least `role`. */
export function useHasRole(role: Role): boolean {
  const { me } = useAuth();
  return !!me && RANK[me.role] >= RANK[role];
}

async function check(): Promise<SessionUser> {
  const r = await request<CheckResponse>('POST', '/v1/auth/check', { own401: true, body: {} });
  return { user: r.body.user, role: r.body.role, expires_at: r.body.expires_at };
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const [me, setMeState] = useState<SessionUser | null>(() => (session.token() ? session.cachedUser() : null));
  const [checking, setChecking] = useState(() => session.token() !== null && me === null);
  const setMe = useCallback((user: SessionUser | null) => {
    if (user) session.setCachedUser(user);
    setMeState(user);
  }, []);
  const [, navigate] = useLocation();
  const queryClient = useQueryClient();

  const expire = useCallback(
    (notice: string) => {
      session.clear();
      queryClient.clear();
      setMe(null);
      // The address as it is now (several requests may fail at once; only the first one sees the page).
      const here = window.location.pathname.replace(/^\/ui(?=\/|$)/, '') || '/';
      if (!here.startsWith('/sign-in')) {
        session.rememberPage(here + window.location.search);
        session.setNotice(notice);
      }
      navigate('/sign-in');
    },
    [navigate, queryClient, setMe],
  );

  useEffect(() => {
    setUnauthenticatedHandler(() => expire('Your session has ended (it expired or was revoked). Sign in again.'));
  }, [expire]);

  useEffect(() => {
    if (!session.token()) return;
    let live = true;
    check()
      .then((u) => live && setMe(u))
      .catch((err: unknown) => {
        if (!live) return;
        if (err instanceof ApiError && err.status === 401) expire('Your session has ended. Sign in again.');
      })
      .finally(() => live && setChecking(false));
    return () => {
      live = false;
    };
    // Only on start: later 401s arrive through the request handler.
  }, []);

  const value = useMemo<AuthState>(
    () => ({
      me,
      checking,
      async signedIn(answer) {
        session.setToken(answer.token);
        setMe(await check());
        const back = session.takeReturnPage();
        navigate(back && back.startsWith('/') && !back.startsWith('/sign-in') ? back : '/runs');
      },
      async signOut() {
        await request('POST', '/v1/auth/logout', { body: {} }).catch(() => undefined);
        session.clear();
        queryClient.clear();
        setMe(null);
        navigate('/sign-in');
      },
    }),
    [me, checking, navigate, queryClient, setMe],
  );
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}
