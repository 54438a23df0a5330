// Webhook signatures (ARCHITECTURE.md "Security"): HMAC-SHA256 of the raw body, compared in constant time, checked
// before anything else is read from the delivery.
import crypto from 'node:crypto';

/** A delivery's headers, names in lower case (as Node gives them). */
export type HookHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** Which header carried the signature. */
export type SignatureScheme = 'gitea' | 'baton' | 'github' | 'gitlab';

export type SignatureVerdict =
  { ok: true; scheme: SignatureScheme } | { ok: false; scheme: SignatureScheme | null; reason: string };

/** One header's value; a header sent twice counts as malformed (node joins custom ones with ", "). */
export function headerOf(headers: HookHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

/** Constant-time equality of two digests of the same length. */
function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** `given` (hex, optionally after `prefix`) against HMAC-SHA256(secret, body). */
function hmacMatches(given: string, prefix: string, body: Buffer, secret: string): boolean {
  const hex = prefix === '' ? given.trim() : given.trim().startsWith(prefix) ? given.trim().slice(prefix.length) : '';
  if (!HEX_SHA256.test(hex)) return false;
  const expected = crypto.createHmac('sha256', secret).update(body).digest();
  return sameDigest(Buffer.from(hex, 'hex'), expected);
}

/**
 * Checks a delivery's signature against the trigger's secret. The first header present decides, in this order:
 * Gitea's own `X-Gitea-Signature` (Gitea also sends GitHub's header: its own is preferred), ours
 * `X-Baton-Signature-256`, GitHub's `X-Hub-Signature-256` (`sha256=<hex>`), GitLab's `X-Gitlab-Token` (the secret
 * itself: digests of both compared in constant time). A present but wrong header never falls back to another.
 */
export function verifyHookSignature(headers: HookHeaders, body: Buffer, secret: string): SignatureVerdict {
  const gitea = headerOf(headers, 'x-gitea-signature');
  if (gitea !== undefined)
    return hmacMatches(gitea, '', body, secret)
      ? { ok: true, scheme: 'gitea' }
      : { ok: false, scheme: 'gitea', reason: 'X-Gitea-Signature does not match the body' };
  const baton = headerOf(headers, 'x-baton-signature-256');
  if (baton !== undefined)
    return hmacMatches(baton, 'sha256=', body, secret)
      ? { ok: true, scheme: 'baton' }
      : { ok: false, scheme: 'baton', reason: 'X-Baton-Signature-256 does not match the body' };
  const github = headerOf(headers, 'x-hub-signature-256');
  if (github !== undefined)
    return hmacMatches(github, 'sha256=', body, secret)
      ? { ok: true, scheme: 'github' }
      : { ok: false, scheme: 'github', reason: 'X-Hub-Signature-256 does not match the body' };
  const gitlab = headerOf(headers, 'x-gitlab-token');
  if (gitlab !== undefined) {
    const digest = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest();
    return sameDigest(digest(gitlab), digest(secret))
      ? { ok: true, scheme: 'gitlab' }
      : { ok: false, scheme: 'gitlab', reason: 'X-Gitlab-Token is not the trigger’s secret' };
  }
  return {
    ok: false,
    scheme: null,
    reason:
      'no signature: send X-Hub-Signature-256, X-Gitea-Signature, X-Baton-Signature-256 (HMAC-SHA256 of the body with the trigger’s secret) or X-Gitlab-Token',
  };
}

/** `sha256=<hex>` of the body: what X-Hub-Signature-256 and X-Baton-Signature-256 carry. */
export function hookSignature(body: Buffer | string, secret: string): string {
  return `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`;
}
