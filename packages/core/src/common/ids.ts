import crypto from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

/** `prefix_` + 26 Crockford base32 characters: 48 bits of milliseconds then 80 random bits (ULID layout). */
export function newId(prefix: string, now: number = Date.now()): string {
  const bytes = crypto.randomBytes(16);
  let rand = '';
  for (let i = 0; i < 16; i++) rand += CROCKFORD[bytes[i]! % 32];
  return `${prefix}_${encodeTime(now)}${rand}`;
}

export function idPrefix(id: string): string {
  const i = id.indexOf('_');
  return i > 0 ? id.slice(0, i) : '';
}
