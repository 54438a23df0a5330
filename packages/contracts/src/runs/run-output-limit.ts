// The run output limit's words, shared by the executor (which cuts first) and the ingester (which holds the same
// limit against any writer), so a truncated log ends with the same notice whichever side cut it.

/** Why an event carries no `res`: past the output limit, or its callback line could not be read whole. */
export type TruncatedNote =
  { reason: 'output_limit' } | { reason: 'event_line_too_long' | 'invalid_json'; bytes: number };

/** A byte count in words: whole mebibytes or kibibytes when it is one (`100 MB`, `64 KB`), else bytes. */
export function describeBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

/** The one line where a truncated log stops (with its newline); its `log` event carries `output_truncated: true`. */
export const outputTruncatedLine = (limitBytes: number): string =>
  `baton: output truncated: this run printed more than ${describeBytes(limitBytes)}; later output was not stored (the run goes on)\n`;
