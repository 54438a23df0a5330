// Single sign-on settings (issue 12, "OpenID Connect" and the role mapping SAML shares). Read once at start; a
// partial or bad configuration stops the start with a message naming the variable. The issuer is not contacted
// here: an unreachable issuer must not stop `serve` (discovery happens at the first sign-in, and is retried).
import fs from 'node:fs';
import { NO_CONTROL_CHARACTERS, ObjectName, ROLES, type Role } from '@baton/contracts';
import { DEFAULT_SSO_SETTINGS, type SsoSettings } from '@baton/core';

export interface OidcSettings {
  /** BATON_OIDC_ISSUER, exactly as the provider writes it in its ID tokens' `iss` */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** BATON_OIDC_REDIRECT_URL: where the provider sends the browser back (default <BATON_PUBLIC_URL>/auth/oidc/callback) */
  redirectUrl: string;
  /** BATON_OIDC_SCOPES; `openid` is always asked for */
  scopes: string[];
  /** the claim whose values are the user's groups (BATON_SSO_ROLE_CLAIM) */
  roleClaim: string;
}

/** Role mapping and team sync (both protocols), plus the name of the groups claim/attribute. */
export interface SsoConfig extends SsoSettings {
  roleClaim: string;
}

/** Thrown for any bad single sign-on setting; the message starts with the variable's name. */
export class SsoConfigError extends Error {}

/** Every BATON_OIDC_* variable; any of them set means OpenID Connect is wanted, and then it must be complete. */
export const OIDC_VARIABLES = [
  'BATON_OIDC_ISSUER',
  'BATON_OIDC_CLIENT_ID',
  'BATON_OIDC_CLIENT_SECRET',
  'BATON_OIDC_CLIENT_SECRET_FILE',
  'BATON_OIDC_REDIRECT_URL',
  'BATON_OIDC_SCOPES',
] as const;

export const DEFAULT_OIDC_SCOPES = ['openid', 'profile', 'email', 'groups'];
export const DEFAULT_ROLE_CLAIM = 'groups';

function fail(variable: string, message: string): never {
  throw new SsoConfigError(`${variable}: ${message}`);
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

function url(variable: string, value: string, opts: { httpsUnlessLoopback: boolean }): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    fail(variable, `must be an http:// or https:// URL, not ${JSON.stringify(value)}`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:')
    fail(variable, `must be an http:// or https:// URL, not ${JSON.stringify(value)}`);
  if (opts.httpsUnlessLoopback && u.protocol === 'http:' && !LOOPBACK.test(u.hostname))
    fail(variable, 'must be an https:// URL (plain http only on this host: localhost, 127.0.0.1, [::1])');
  if (u.hash || value.includes('#')) fail(variable, 'must not carry a fragment');
  if (u.search) fail(variable, 'must not carry a query');
  if (u.username || u.password) fail(variable, 'must not carry a user name or password');
  return value;
}

/** RFC 6749 scope tokens, separated by spaces or commas. */
function scopes(value: string): string[] {
  const list = value.split(/[\s,]+/).filter(Boolean);
  if (list.length === 0) fail('BATON_OIDC_SCOPES', 'must name at least one scope');
  for (const s of list)
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s)) fail('BATON_OIDC_SCOPES', `${JSON.stringify(s)} is not a scope name`);
  return [...new Set(['openid', ...list])];
}

function secret(env: Record<string, string | undefined>): string {
  const inline = env.BATON_OIDC_CLIENT_SECRET;
  const file = env.BATON_OIDC_CLIENT_SECRET_FILE;
  if (inline && file) fail('BATON_OIDC_CLIENT_SECRET_FILE', 'give either BATON_OIDC_CLIENT_SECRET or this, not both');
  if (inline) return inline;
  if (!file) fail('BATON_OIDC_CLIENT_SECRET', 'must be set (or BATON_OIDC_CLIENT_SECRET_FILE) when OIDC is configured');
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    fail(
      'BATON_OIDC_CLIENT_SECRET_FILE',
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  // A file written by `echo` ends in a newline that is not part of the secret.
  const value = text.replace(/\r?\n$/, '');
  if (!value) fail('BATON_OIDC_CLIENT_SECRET_FILE', `${file} is empty`);
  return value;
}

/**
 * BATON_SSO_ROLE_MAP: `group=role` pairs separated by commas (`ops-admins=admin,ops=operator`), each split at its
 * last `=`; or a JSON object (`{"cn=ops,ou=groups": "operator"}`) for group names that contain commas.
 */
function roleMap(value: string | undefined, teamSync: boolean): SsoSettings['roleMap'] {
  if (!value) return [];
  const V = 'BATON_SSO_ROLE_MAP';
  let pairs: Array<[string, unknown]>;
  if (value.trimStart().startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      fail(V, 'starts with { but is not a JSON object');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) fail(V, 'must be a JSON object');
    pairs = Object.entries(parsed);
  } else {
    pairs = value
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p) => {
        const at = p.lastIndexOf('=');
        if (at <= 0) fail(V, `${JSON.stringify(p)} is not group=role`);
        return [p.slice(0, at).trim(), p.slice(at + 1).trim()];
      });
  }
  const seen = new Set<string>();
  return pairs.map(([group, role]) => {
    if (!group) fail(V, 'a group name is empty');
    if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role))
      fail(V, `the role of ${JSON.stringify(group)} must be one of ${ROLES.join(', ')}`);
    if (seen.has(group)) fail(V, `${JSON.stringify(group)} is mapped twice`);
    seen.add(group);
    // With team sync each mapped group names a team: it must be a valid team name as it is.
    if (teamSync && ObjectName.safeParse(group).data !== group)
      fail(
        V,
        `${JSON.stringify(group)} cannot name a team (BATON_SSO_TEAM_SYNC): 1–100 characters, no control characters, no surrounding spaces`,
      );
    return { group, role: role as Role };
  });
}

/** Reads the OIDC client (undefined when no BATON_OIDC_* is set) and the role mapping every protocol shares. */
export function loadSsoConfig(
  env: Record<string, string | undefined>,
  publicUrl: string,
): { oidc?: OidcSettings | undefined; sso: SsoConfig } {
  const teamSyncText = env.BATON_SSO_TEAM_SYNC;
  if (teamSyncText !== undefined && teamSyncText !== 'true' && teamSyncText !== 'false')
    fail('BATON_SSO_TEAM_SYNC', 'must be true or false');
  const teamSync = teamSyncText === 'true';
  const roleClaim = env.BATON_SSO_ROLE_CLAIM ?? DEFAULT_ROLE_CLAIM;
  if (roleClaim.length > 256 || !NO_CONTROL_CHARACTERS.test(roleClaim))
    fail('BATON_SSO_ROLE_CLAIM', 'must be a claim name of at most 256 characters');
  const sso: SsoConfig = {
    ...DEFAULT_SSO_SETTINGS,
    roleClaim,
    teamSync,
    roleMap: roleMap(env.BATON_SSO_ROLE_MAP, teamSync),
  };
  if (!OIDC_VARIABLES.some((v) => env[v] !== undefined)) return { sso };

  const issuer = env.BATON_OIDC_ISSUER;
  if (!issuer) fail('BATON_OIDC_ISSUER', 'must be set when any BATON_OIDC_* variable is (the provider’s issuer URL)');
  const clientId = env.BATON_OIDC_CLIENT_ID;
  if (!clientId) fail('BATON_OIDC_CLIENT_ID', 'must be set when OIDC is configured');
  const oidc: OidcSettings = {
    issuer: url('BATON_OIDC_ISSUER', issuer, { httpsUnlessLoopback: true }),
    clientId,
    clientSecret: secret(env),
    redirectUrl: url('BATON_OIDC_REDIRECT_URL', env.BATON_OIDC_REDIRECT_URL ?? `${publicUrl}/auth/oidc/callback`, {
      httpsUnlessLoopback: false,
    }),
    scopes: env.BATON_OIDC_SCOPES === undefined ? DEFAULT_OIDC_SCOPES : scopes(env.BATON_OIDC_SCOPES),
    roleClaim,
  };
  return { oidc, sso };
}
