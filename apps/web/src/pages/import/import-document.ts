// Reading the chosen file in the browser before anything is sent: too large, not JSON or not a JSON object are
// said here, in words, instead of as a server error after a 20 MiB upload.

/** The server's body limit (MAX_IMPORT_BYTES in @baton/contracts; a value import would ship zod to the browser). */
export const MAX_IMPORT_BYTES = 20 * 1024 * 1024;

export type ReadDocument = { ok: true; document: Record<string, unknown> } | { ok: false; message: string };

/** A size for people: `340 KiB`, `4.2 MiB`. */
export function humanSize(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.max(1, Math.ceil(bytes / 1024))} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The file's JSON document, or why it cannot be sent. */
export async function readDocument(file: File): Promise<ReadDocument> {
  if (file.size > MAX_IMPORT_BYTES)
    return {
      ok: false,
      message: `${file.name} is ${humanSize(file.size)}: the server accepts at most ${humanSize(MAX_IMPORT_BYTES)}.`,
    };
  let text: string;
  try {
    text = await file.text();
  } catch {
    return { ok: false, message: `${file.name} could not be read.` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // The engine's words say where it stopped ("Unexpected end of JSON input", "… at position 123").
    return {
      ok: false,
      message: `${file.name} is not valid JSON (${(err as Error).message}). Export it again: it may be truncated or not an export at all.`,
    };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return {
      ok: false,
      message: `${file.name} holds JSON, but not an object ({…}): both an AWX export and a Semaphore backup are one object.`,
    };
  return { ok: true, document: parsed as Record<string, unknown> };
}
