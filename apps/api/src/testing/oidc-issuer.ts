// A real OpenID Connect issuer for tests (oidc-provider on 127.0.0.1, a random port), with a confidential client
// that must use PKCE, accounts whose claims a test can change between sign-ins, and a small "browser" that drives the
// provider's own login and consent pages with HTTP requests, following redirects and keeping cookies by hand.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestAccountClaims {
  preferred_username?: string;
  email?: string;
  groups?: string[];
  [claim: string]: unknown;
}

export interface TestIssuer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** claims by account id (= the `sub`); change them between sign-ins */
  accounts: Map<string, TestAccountClaims>;
  close(): Promise<void>;
}

export async function listenOnLoopback(server: http.Server, port = 0): Promise<number> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

export async function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Starts the issuer (on `port`, default a random one) with one client allowed to send browsers back to `redirectUri`. */
export async function startTestIssuer(redirectUri: string, port = 0): Promise<TestIssuer> {
  const server = http.createServer();
  port = await listenOnLoopback(server, port);
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = 'baton-test';
  const clientSecret = 'a test client secret that is long enough';
  const accounts = new Map<string, TestAccountClaims>();
  // oidc-provider warns (on load and construction) about its development defaults and Node 20, which is what a
  // test issuer wants: keep those warnings out of the test output.
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).startsWith('oidc-provider WARNING')) warn(...args);
  };
  try {
    const { default: Provider } = await import('oidc-provider');
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
      // Every authorization request must carry a PKCE challenge and every code exchange its verifier.
      pkce: { required: () => true },
      scopes: ['openid', 'profile', 'email', 'groups'],
      claims: { openid: ['sub'], profile: ['preferred_username', 'name'], email: ['email'], groups: ['groups'] },
      cookies: { keys: ['oidc test cookie key'] },
      features: { devInteractions: { enabled: true } },
      findAccount: (_ctx: unknown, id: string) =>
        accounts.has(id) ? { accountId: id, claims: () => ({ sub: id, ...accounts.get(id) }) } : undefined,
    });
    server.on('request', provider.callback());
  } finally {
    console.warn = warn;
  }
  return { issuer, clientId, clientSecret, accounts, close: () => closeServer(server) };
}

/** A minimal browser: one cookie jar, manual redirects, HTML forms of the provider's dev interactions. */
export class TestBrowser {
  private readonly jar = new Map<string, string>();

  private remember(res: globalThis.Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => {
        const [k, v] = a.split('=').map((x) => x.trim());
        return (
          (k?.toLowerCase() === 'expires' && Date.parse(v ?? '') < Date.now()) ||
          (k?.toLowerCase() === 'max-age' && Number(v) <= 0)
        );
      });
      if (expired || value === '') this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  async request(
    url: string,
    init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<globalThis.Response> {
    const headers: Record<string, string> = { accept: 'text/html', ...init.headers };
    if (this.jar.size) headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const res = await fetch(url, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    this.remember(res);
    return res;
  }

  /**
   * Follows the provider's redirects from `authorizeUrl`, signing in as `accountId` and consenting where asked,
   * until the provider sends the browser to a URL starting with `stopAt` (the client's redirect URI): returns it.
   * `abort` declines at the first page instead (the provider answers access_denied).
   */
  async signInAtProvider(
    authorizeUrl: string,
    accountId: string,
    stopAt: string,
    opts: { abort?: boolean } = {},
  ): Promise<string> {
    let url = authorizeUrl;
    for (let hop = 0; hop < 20; hop++) {
      if (url.startsWith(stopAt)) return url;
      const res = await this.request(url);
      const location = res.headers.get('location');
      if (location) {
        url = new URL(location, url).toString();
        continue;
      }
      const html = await res.text();
      if (res.status !== 200) throw new Error(`provider answered ${res.status} at ${url}: ${html.slice(0, 500)}`);
      const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
      const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
      if (!action || !prompt) throw new Error(`no interaction form at ${url}: ${html.slice(0, 500)}`);
      if (opts.abort) {
        url = new URL(`${new URL(action, url).pathname}/abort`, url).toString();
        continue;
      }
      const form: Record<string, string> = { prompt };
      if (prompt === 'login') Object.assign(form, { login: accountId, password: 'any' });
      const submitted = await this.request(new URL(action.replace(/&amp;/g, '&'), url).toString(), { form });
      const next = submitted.headers.get('location');
      if (!next)
        throw new Error(`the ${prompt} form answered ${submitted.status}: ${(await submitted.text()).slice(0, 500)}`);
      url = new URL(next, url).toString();
    }
    throw new Error('too many redirects at the provider');
  }
}
