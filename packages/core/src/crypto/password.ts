import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (
  pw: string,
  salt: Buffer,
  len: number,
  opts: crypto.ScryptOptions,
) => Promise<Buffer>;

/** scrypt's cost: N (a power of two), block size r, parallelism p. Each hash records its own, so any verifies. */
export interface PasswordHashParams {
  N: number;
  r: number;
  p: number;
}

// scrypt with N=2^15, r=8, p=1 (32 MiB, ~50-100 ms): OWASP's recommended floor.
export const DEFAULT_PASSWORD_HASH_PARAMS: Readonly<PasswordHashParams> = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LEN = 32;
const MAXMEM = 64 * 1024 * 1024;

export async function hashPassword(
  password: string,
  params: Readonly<PasswordHashParams> = DEFAULT_PASSWORD_HASH_PARAMS,
): Promise<string> {
  const salt = crypto.randomBytes(16);
  const key = await scrypt(password.normalize('NFKC'), salt, KEY_LEN, { ...params, maxmem: MAXMEM });
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await scrypt(password.normalize('NFKC'), Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: MAXMEM,
  });
  return crypto.timingSafeEqual(actual, expected);
}

// A real hash of a random password: verifying against it costs what a real check costs, so a login for an
// unknown user takes as long as one with a wrong password and does not reveal that the user is unknown.
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(crypto.randomBytes(16).toString('hex'));
  return decoy;
}
