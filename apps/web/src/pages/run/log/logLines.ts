// A run's log as numbered lines (line n at index n-1), filled from /logs pages and the stream's `log` chunks.
// Lines are placed by their number, so a chunk seen twice (a resumed stream, a page that overlaps a chunk) adds
// nothing twice, and a chunk that starts past the end waits for the gap to be fetched (never a hole).

/** The lines of a text, without their newlines (a last line without one is kept). */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export class LogLines {
  private readonly lines: string[] = [];

  get count(): number {
    return this.lines.length;
  }

  line(n: number): string {
    return this.lines[n - 1] ?? '';
  }

  /** Lines from number `start` on; returns how many were new. `start` beyond count+1 is a caller error. */
  place(start: number, text: string | string[]): number {
    if (start > this.lines.length + 1)
      throw new Error(`log line ${start} would leave a gap after ${this.lines.length}`);
    const incoming = typeof text === 'string' ? splitLines(text) : text;
    const skip = this.lines.length + 1 - start;
    if (skip >= incoming.length) return 0;
    // push in slices: spreading 100k+ arguments at once overflows the call stack
    for (let i = skip; i < incoming.length; i += 10_000)
      this.lines.push(...incoming.slice(i, Math.min(i + 10_000, incoming.length)));
    return incoming.length - skip;
  }

  /** Numbers (1-based) of the lines from `from` on whose plain text contains `needle` (lower-cased). */
  find(needle: string, from: number, plain: (line: string) => string): number[] {
    const out: number[] = [];
    for (let i = from - 1; i < this.lines.length; i++)
      if (plain(this.lines[i]!).toLowerCase().includes(needle)) out.push(i + 1);
    return out;
  }
}
