import crypto from 'node:crypto';

/** A bearer token: 32 random bytes. Only its SHA-256 is stored. */
export function newToken(): string {
  return `bt_${crypto.randomBytes(32).toString('base64url')}`;
}

export function sha256Hex(data: string | Buffer): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}
