import fs from 'node:fs';

/**
 * A secret from a `…_FILE` variable: the file's text without the final newline `echo` writes, or why it could not be
 * read (the errno code, never the content).
 */
export function readSecretFile(file: string): { text: string } | { error: string } {
  try {
    return { text: fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '') };
  } catch (err) {
    return { error: `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
}
