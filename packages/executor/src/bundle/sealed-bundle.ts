// The sealed run bundle (ARCHITECTURE.md, "A run's path" step 2): in queue mode a job carries its bundle
// encrypted with AES-256-GCM under BATON_WORKER_KEY, so no secret sits in Redis in clear text. The run id is
// authenticated data: a bundle sealed for one run cannot be replayed as another's.
import crypto from 'node:crypto';
import { RunBundle } from '@baton/contracts';

const VERSION = 'wb1';

export class SealedBundleError extends Error {
  override name = 'SealedBundleError';
}

/** A worker key: 32 bytes, given as 64 hex digits or base64 / base64url. */
export function parseWorkerKey(text: string): Buffer {
  const t = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
  if (bytes.length !== 32) throw new Error('must be 32 bytes, as 64 hex digits or base64');
  return bytes;
}

/** `wb1.<iv>.<tag>.<ciphertext>` (base64url parts) over the bundle's JSON, with its run id as associated data. */
export function sealBundle(bundle: RunBundle, key: Buffer): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`${VERSION}:${bundle.run_id}`));
  const ct = Buffer.concat([cipher.update(JSON.stringify(bundle), 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join(
    '.',
  );
}

/** Opens a bundle sealed for `runId`; a wrong key, another run's bundle or any tampering is a SealedBundleError. */
export function openBundle(sealed: string, runId: string, key: Buffer): RunBundle {
  const [version, iv, tag, ct] = sealed.split('.');
  if (version !== VERSION || !iv || !tag || ct === undefined) throw new SealedBundleError('not a sealed run bundle');
  let plain: Buffer;
  try {
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(`${VERSION}:${runId}`));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    plain = Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]);
  } catch {
    throw new SealedBundleError(
      `the bundle of run ${runId} does not open with this worker key (another key, another run, or altered)`,
    );
  }
  const parsed = RunBundle.safeParse(JSON.parse(plain.toString('utf8')));
  if (!parsed.success)
    throw new SealedBundleError(
      `the bundle of run ${runId} is not a valid run bundle: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
    );
  if (parsed.data.run_id !== runId)
    throw new SealedBundleError(`the bundle of run ${runId} names run ${parsed.data.run_id}`);
  return parsed.data;
}
