// The HTTP Range header (RFC 9110 §14.2) for byte ranges: what a request asks for, before the size is known.

export type ByteRangeSpec = { start: number; end?: number } | { suffix: number };

export type RangeRequest =
  /** no Range header, or a unit other than bytes (which a server must ignore) */
  | { kind: 'none' }
  | { kind: 'single'; range: ByteRangeSpec }
  /** several ranges: Baton answers the whole representation (200), which RFC 9110 allows */
  | { kind: 'multiple' }
  /** bytes, but not a valid ranges-specifier (e.g. `bytes=9-3`, `bytes=x`): answered 416 */
  | { kind: 'invalid' };

const SPEC = /^(?:(\d+)-(\d*)|-(\d+))$/;

/** Digits as a number; beyond 2^53 the exact value cannot matter, any log is smaller. */
const num = (digits: string) => Math.min(Number(digits), Number.MAX_SAFE_INTEGER);

export function parseRange(header: string | undefined): RangeRequest {
  if (header === undefined) return { kind: 'none' };
  const eq = header.indexOf('=');
  if (eq < 0) return { kind: 'invalid' };
  // The range unit is case-insensitive; an unknown one means the header is not meant for us.
  if (header.slice(0, eq).trim().toLowerCase() !== 'bytes') return { kind: 'none' };
  const specs = header
    .slice(eq + 1)
    .split(',')
    .map((s) => s.trim());
  const ranges: ByteRangeSpec[] = [];
  for (const spec of specs) {
    const m = SPEC.exec(spec);
    if (!m) return { kind: 'invalid' };
    if (m[3] !== undefined) {
      ranges.push({ suffix: num(m[3]) });
      continue;
    }
    const start = num(m[1]!);
    if (m[2] === '') {
      ranges.push({ start });
      continue;
    }
    const end = num(m[2]!);
    if (end < start) return { kind: 'invalid' };
    ranges.push({ start, end });
  }
  if (ranges.length > 1) return { kind: 'multiple' };
  return { kind: 'single', range: ranges[0]! };
}
