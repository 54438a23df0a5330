// The callback pipe as lines, read with a bounded buffer. Anything running in ansible's processes can write to
// that pipe, so a line may never end: the reader keeps at most `maxLineBytes` of a line, and of a longer one only
// its head (where our plugin writes every field but `res`), skipping the rest up to the next newline.

/** How much of a too-long line is kept to recover its event's fields from. */
export const OVERSIZE_HEAD_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

export interface EventLineSink {
  /** a whole line, without its newline */
  line(text: string): void;
  /** a line longer than the bound: its first bytes (decoded) and its full size */
  oversize(head: string, bytes: number): void;
}

export class BoundedLineReader {
  private parts: Buffer[] = [];
  private bytes = 0;
  /** past the bound: only the head is kept, the rest of the line is counted until its newline */
  private oversizeHead: Buffer | undefined;

  constructor(
    private readonly maxLineBytes: number,
    private readonly sink: EventLineSink,
  ) {}

  /** A newline byte never occurs inside a UTF-8 character, so lines are cut on bytes and decoded whole. */
  push(chunk: Buffer): void {
    let from = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, from)) {
      this.take(chunk.subarray(from, nl));
      this.endLine();
      from = nl + 1;
    }
    if (from < chunk.length) this.take(chunk.subarray(from));
  }

  /** The pipe closed: a last line without its newline still counts. */
  end(): void {
    if (this.bytes > 0) this.endLine();
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    this.bytes += piece.length;
    if (this.oversizeHead) return;
    if (this.bytes <= this.maxLineBytes) {
      // Copied: a chunk's memory must not stay pinned by a slice of it.
      this.parts.push(Buffer.from(piece));
      return;
    }
    const all = Buffer.concat([...this.parts, piece]);
    this.oversizeHead = Buffer.from(all.subarray(0, Math.min(OVERSIZE_HEAD_BYTES, this.maxLineBytes)));
    this.parts = [];
  }

  private endLine(): void {
    const { bytes, oversizeHead } = this;
    const text = oversizeHead ? undefined : Buffer.concat(this.parts).toString('utf8');
    this.parts = [];
    this.bytes = 0;
    this.oversizeHead = undefined;
    if (oversizeHead) this.sink.oversize(oversizeHead.toString('utf8'), bytes);
    else if (text) this.sink.line(text);
  }
}

const RES_FIELD = ', "res": ';

/**
 * The fields before `res` of a callback line that cannot be parsed whole (too long, or holding no JSON such as a
 * bare NaN from an older plugin): our plugin writes `res` last with Python's default separators, and a quote inside
 * a string is escaped, so the first `, "res": ` ends the top-level fields. Undefined when even those do not parse.
 */
export function fieldsBeforeRes(text: string): Record<string, unknown> | undefined {
  const at = text.indexOf(RES_FIELD);
  if (at === -1) return undefined;
  try {
    const parsed: unknown = JSON.parse(`${text.slice(0, at)}}`);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
