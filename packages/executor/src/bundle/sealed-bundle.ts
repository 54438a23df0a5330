// The sealed run bundle (ARCHITECTURE.md, "A run's path" step 2): in queue mode a job carries its bundle
// encrypted with AES-256-GCM under BATON_WORKER_KEY, so no secret sits in Redis in clear text. The associated data
// binds the run id (a bundle sealed for one run cannot be replayed as another's), a random nonce made at each seal
// (one enqueue: workers claim `run id + nonce` once, so a job re-added to Redis never starts the run again) and an
// expiry (so that claim need only be remembered for the bundle's lifetime).
import crypto from 'node:crypto';
import { RunBundle } from '@baton/contracts';

const VERSION = 'wb2';

/** How long a sealed bundle opens: a job waiting longer for a worker ends `error` / `bundle_expired`. */
export const BUNDLE_LIFETIME_MS = 24 * 3600_000;

export class SealedBundleError extends Error {
  override name = 'SealedBundleError';
}

/** The bundle opens but its lifetime is over: the run must not start from it. */
export class SealedBundleExpiredError extends SealedBundleError {
  override name = 'SealedBundleExpiredError';
}

/** What a worker learns from a sealed bundle: the bundle, and the enqueue it belongs to. */
export interface OpenedBundle {
  bundle: RunBundle;
  /** Random per seal (per enqueue): the worker claims `run id + nonce` once before starting ansible. */
  nonce: string;
  /** Epoch ms after which the bundle no longer opens. */
  expiresAt: number;
}

export interface SealOptions {
  /** default Date.now() */
  now?: number;
  /** default BUNDLE_LIFETIME_MS */
  lifetimeMs?: number;
}

/** A worker key: 32 bytes, given as 64 hex digits or base64 / base64url. */
export function parseWorkerKey(text: string): Buffer {
  const t = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
  if (bytes.length !== 32) throw new Error('must be 32 bytes, as 64 hex digits or base64');
  return bytes;
}

const associatedData = (runId: string, nonce: string, expiresAt: number): Buffer =>
  Buffer.from(`${VERSION}:${runId}:${nonce}:${expiresAt}`);

/**
 * `wb2.<nonce>.<expires at, epoch ms>.<iv>.<tag>.<ciphertext>` (base64url parts) over the bundle's JSON; the run id,
 * nonce and expiry are associated data: changing any of them makes the bundle refuse to open.
 */
export function sealBundle(bundle: RunBundle, key: Buffer, options: SealOptions = {}): string {
  const expiresAt = (options.now ?? Date.now()) + (options.lifetimeMs ?? BUNDLE_LIFETIME_MS);
  const nonce = crypto.randomBytes(16).toString('base64url');
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(associatedData(bundle.run_id, nonce, expiresAt));
  const ct = Buffer.concat([cipher.update(JSON.stringify(bundle), 'utf8'), cipher.final()]);
  return [
    VERSION,
    nonce,
    String(expiresAt),
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    ct.toString('base64url'),
  ].join('.');
}

/**
 * Opens a bundle sealed for `runId`. A wrong key, another run's bundle, an altered nonce or expiry or any other
 * tampering is a SealedBundleError; a bundle past its expiry (by `now`) a SealedBundleExpiredError.
 */
export function openSealedBundle(sealed: string, runId: string, key: Buffer, now = Date.now()): OpenedBundle {
  const [version, nonce, expiry, iv, tag, ct, ...rest] = sealed.split('.');
  if (version !== VERSION || !nonce || !expiry || !iv || !tag || ct === undefined || rest.length > 0)
    throw new SealedBundleError('not a sealed run bundle');
  const expiresAt = /^[0-9]{1,15}$/.test(expiry) ? Number(expiry) : NaN;
  if (!Number.isSafeInteger(expiresAt)) throw new SealedBundleError('not a sealed run bundle');
  let plain: Buffer;
  try {
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(associatedData(runId, nonce, expiresAt));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    plain = Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]);
  } catch {
    throw new SealedBundleError(
      `the bundle of run ${runId} does not open with this worker key (another key, another run, or altered)`,
    );
  }
  // Checked after the tag: only an authentic expiry is worth reporting as one.
  if (now >= expiresAt)
    throw new SealedBundleExpiredError(
      `the bundle of run ${runId} expired at ${new Date(expiresAt).toISOString()}: it waited too long for a worker`,
    );
  const parsed = RunBundle.safeParse(JSON.parse(plain.toString('utf8')));
  if (!parsed.success)
    throw new SealedBundleError(
      `the bundle of run ${runId} is not a valid run bundle: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
    );
  if (parsed.data.run_id !== runId)
    throw new SealedBundleError(`the bundle of run ${runId} names run ${parsed.data.run_id}`);
  return { bundle: parsed.data, nonce, expiresAt };
}

/** Opens a bundle sealed for `runId` (see openSealedBundle) and returns only the bundle. */
export function openBundle(sealed: string, runId: string, key: Buffer): RunBundle {
  return openSealedBundle(sealed, runId, key).bundle;
}
