// Sign-in: password, and the single sign-on buttons this server offers. Finishes an SSO round trip too: the
// server sends the browser to /ui/#sso_code=… (or #sso_error=…), and the code is exchanged for a token here.
import type { AuthMethods, LoginResponse } from '@baton/contracts';
import { useEffect, useRef, useState } from 'react';
import { ApiError, request } from '../api/client';
import { Field, FormError } from '../ui/forms';
import { useAuth } from './auth';
import { session } from './session';

const SSO_MESSAGES: Record<string, string> = {
  state_mismatch: 'The sign-in took too long or was already used. Try again.',
  nonce_mismatch: 'The identity provider’s answer did not match this sign-in. Try again.',
  access_denied: 'Sign-in was declined at the identity provider.',
  provider_error: 'The identity provider answered with an error.',
  unavailable: 'The identity provider cannot be reached right now.',
  invalid_username: 'Your identity has no name Baton can use as a username. Ask an administrator.',
  username_taken: 'A local account already has your username. Ask an administrator to link it.',
  invalid_assertion: 'The identity provider’s assertion was refused.',
};

/** `#sso_code` / `#sso_error` in the address (read without side effects: React may render more than once). */
function readSsoFragment(): { code?: string; error?: string } {
  const hash = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  return { code: hash.get('sso_code') ?? undefined, error: hash.get('sso_error') ?? undefined };
}

export function SignInPage() {
  const { signedIn } = useAuth();
  // Read in render, removed once shown (an initializer with side effects loses them when React discards a render).
  const [notice] = useState(() => session.notice());
  const [methods, setMethods] = useState<AuthMethods>({ password: true, oidc: false, saml: false });
  const [error, setError] = useState<unknown>(null);
  const [ssoError, setSsoError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [fragment] = useState(readSsoFragment);

  useEffect(() => {
    session.clearNotice();
    // A reload or a shared link never repeats the fragment.
    if (fragment.code || fragment.error)
      history.replaceState(null, '', window.location.pathname + window.location.search);
  }, [fragment]);

  useEffect(() => {
    document.title = 'Sign in · Baton';
    request<AuthMethods>('GET', '/v1/auth/methods', { anonymous: true })
      .then((r) => setMethods(r.body))
      .catch(() => undefined);
  }, []);

  // The SSO outcome, once: a one-time code is exchanged a single time even if the page renders again.
  const exchanged = useRef(false);
  useEffect(() => {
    if (exchanged.current) return;
    exchanged.current = true;
    const { code, error: failure } = fragment;
    if (failure) setSsoError(SSO_MESSAGES[failure] ?? `Single sign-on failed (${failure}).`);
    if (!code) return;
    setBusy(true);
    request<LoginResponse>('POST', '/v1/auth/exchange', { anonymous: true, body: { code } })
      .then((r) => signedIn(r.body))
      .catch((err: unknown) => {
        setSsoError(
          err instanceof ApiError && err.status === 401
            ? 'That sign-in link has expired or was already used. Sign in again.'
            : 'Single sign-on could not be finished.',
        );
      })
      .finally(() => setBusy(false));
  }, [fragment, signedIn]);

  async function submit(form: HTMLFormElement) {
    const data = new FormData(form);
    setBusy(true);
    setError(null);
    try {
      const r = await request<LoginResponse>('POST', '/v1/auth/login', {
        anonymous: true,
        body: { username: data.get('username'), password: data.get('password') },
      });
      await signedIn(r.body);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  return (
    <main className="signin" id="main">
      <h1>Sign in to Baton</h1>
      {notice ? (
        <div className="banner banner-warn" role="status">
          {notice}
        </div>
      ) : null}
      {ssoError ? (
        <div className="banner banner-error" role="alert">
          {ssoError}
        </div>
      ) : null}
      {methods.password ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void submit(e.currentTarget);
          }}
        >
          <FormError error={error} fields={['username', 'password']} />
          <Field label="Username" name="username" error={error}>
            {(p) => <input {...p} name="username" autoComplete="username" required autoFocus />}
          </Field>
          <Field label="Password" name="password" error={error}>
            {(p) => <input {...p} name="password" type="password" autoComplete="current-password" required />}
          </Field>
          <button type="submit" className="btn btn-primary" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      ) : null}
      {methods.oidc || methods.saml ? (
        <div className="sso">
          <p className="muted">Or sign in with your organisation’s account:</p>
          {methods.oidc ? (
            <a className="btn" href="/auth/oidc/login">
              Sign in with OpenID Connect
            </a>
          ) : null}
          {methods.saml ? (
            <a className="btn" href="/auth/saml/login">
              Sign in with SAML
            </a>
          ) : null}
        </div>
      ) : null}
    </main>
  );
}
