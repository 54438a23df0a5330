/**
 * `new URL()` throws on text that is no URL; validation must never throw (a throw inside a zod refinement is a
 * 500), so schemas parse through this and treat undefined as "not a URL".
 */
export function tryParseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
