// Passwords the UI makes up for a new account or a reset, so an admin need not invent one.

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** 20 characters from the browser's CSPRNG (about 117 bits), without look-alike characters. */
export function generatePassword(length = 20): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
  let out = '';
  // Rejection sampling keeps every character equally likely (256 is not a multiple of the alphabet's size).
  const limit = 256 - (256 % ALPHABET.length);
  for (const b of bytes) {
    if (out.length === length) break;
    if (b < limit) out += ALPHABET[b % ALPHABET.length];
  }
  return out.length === length ? out : generatePassword(length);
}
