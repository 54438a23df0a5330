// Where a JSON body stopped parsing, for the 400 that refuses it.
/**
 * Where body-parser's JSON.parse failed, as `line L, column C` (from the "at position N" in its message and the raw
 * body it keeps), or undefined when the message names no position (e.g. the input ended early).
 */
export function jsonSyntaxWhere(err: unknown): string | undefined {
  const { message, body } = (err ?? {}) as { message?: unknown; body?: unknown };
  const at = typeof message === 'string' ? /at position (\d+)/.exec(message) : null;
  if (!at || typeof body !== 'string')
    return typeof message === 'string' && /end of JSON/.test(message) ? 'the end (it is cut short)' : undefined;
  const before = body.slice(0, Number(at[1]));
  const line = before.split('\n').length;
  return `line ${line}, column ${before.length - before.lastIndexOf('\n')}`;
}
