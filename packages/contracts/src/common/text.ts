// Text a database keeps exactly as given. Both databases store UTF-8: a lone UTF-16 surrogate has no UTF-8 form
// (the drivers write U+FFFD instead) and PostgreSQL refuses NUL in text. The edge refuses such text; the audit
// trail, which must never fail to record, stores it with U+FFFD in their place.

// With the u flag, \p{Surrogate} matches only a surrogate that is not half of a pair.
const LONE_SURROGATE = /\p{Surrogate}/u;
const LONE_SURROGATES = /\p{Surrogate}/gu;

/** Why this text cannot be stored as given, or undefined when it can. */
export function unstorableTextReason(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode (a lone UTF-16 surrogate is not)';
  return undefined;
}

/** The text with every lone surrogate and NUL replaced by U+FFFD: what a database gives back is what it got. */
export function storableText(text: string): string {
  return text.replace(LONE_SURROGATES, '\uFFFD').replaceAll('\u0000', '\uFFFD');
}

// Stateless when fatal and not streaming: one decoder serves every call.
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The bytes as text when they are UTF-8, else undefined (never U+FFFD in place of bytes that are not). */
export function decodeUtf8Strictly(bytes: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}
