// "Never run twice" (issue 19): each enqueue seals its bundle with a random nonce (sealed-bundle.ts in
// @baton/executor), and a worker claims `run id + nonce` once, before it starts ansible. A job re-added to Redis
// with the same payload (a stale snapshot restored, a foreign writer) carries a pair already claimed and is dropped.
import { randomUUID } from 'node:crypto';
import { closeRedis, openRedis } from './redis-connection.js';
import { withTimeout } from '../timers.js';

export interface RunClaims {
  /**
   * Claims `runId` + `nonce` for `ttlMs` (the rest of the bundle's lifetime: a replay after that cannot open it).
   * true: this caller is the first; false: the pair was claimed before, by any worker, or by this process (kept in
   * memory too, so a Redis that lost the key still cannot hand this worker the same job twice). Tried `attempts`
   * times; rejects when Redis never answered: the caller must not run what it could not claim.
   */
  claim(runId: string, nonce: string, ttlMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface RunClaimsOptions {
  redisUrl: string;
  prefix: string;
  onError?: (err: unknown) => void;
  /** How long one attempt waits for Redis. Default 5 000. */
  timeoutMs?: number;
  /** Attempts per claim (a reply lost in a disconnect is retried; the claim's token tells a retry it had won). Default 3. */
  attempts?: number;
  now?: () => number;
}

export class InvalidRunClaimError extends Error {
  override name = 'InvalidRunClaimError';
}

/** The claim marker of one enqueue of a run. */
export const runClaimKey = (prefix: string, runId: string, nonce: string): string =>
  `${prefix}:claimed:${runId}:${nonce}`;

const SAFE_PART = /^[A-Za-z0-9_-]{1,200}$/;

export function createRunClaims({
  redisUrl,
  prefix,
  onError,
  timeoutMs = 5_000,
  attempts = 3,
  now = Date.now,
}: RunClaimsOptions): RunClaims {
  const redis = openRedis(redisUrl, `${prefix}:run-claims`, { onError });
  /** Pairs this process claimed → when their claim ends (epoch ms), in claim order. */
  const local = new Map<string, number>();

  const forgetExpired = (): void => {
    const at = now();
    for (const [key, until] of local) if (until <= at) local.delete(key);
  };

  return {
    async claim(runId, nonce, ttlMs) {
      if (!SAFE_PART.test(runId) || !SAFE_PART.test(nonce))
        throw new InvalidRunClaimError('run id and nonce must be non-empty base64url-like strings');
      const ttl = Math.max(1, Math.ceil(ttlMs));
      const key = runClaimKey(prefix, runId, nonce);
      forgetExpired();
      if (local.has(key)) return false;
      // SET NX GET: nil when this SET took, else the holder's token; ours means an earlier attempt won whose reply was lost.
      const token = randomUUID();
      for (let attempt = 1; ; attempt++) {
        try {
          const holder = await withTimeout(
            redis.call('SET', key, token, 'PX', String(ttl), 'NX', 'GET'),
            timeoutMs,
            () => new Error(`Redis did not answer the claim of run ${runId} within ${timeoutMs} ms`),
          );
          if (holder !== null && holder !== token) return false;
          local.set(key, now() + ttl);
          return true;
        } catch (error) {
          if (attempt >= attempts) throw error;
          onError?.(error);
        }
      }
    },
    close: () => closeRedis(redis),
  };
}
