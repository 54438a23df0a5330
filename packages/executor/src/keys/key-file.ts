// BATON_MASTER_KEY_FILE and BATON_WORKER_KEY_FILE: a key read once from a file, so it need not sit in the process
// environment (/proc/<pid>/environ). The file must be a regular file only its owner may read or write: a key anyone
// on the host can read protects nothing. Shared by `baton serve` and `baton worker`.
import fs from 'node:fs';

/** The key text of `file` (final newline dropped), or why it is refused: never the content. */
export function readKeyFile(file: string): { key: string } | { error: string } {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    return { error: `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  if (!stat.isFile()) return { error: `${file} is not a regular file` };
  const mode = stat.mode & 0o777;
  if ((mode & 0o077) !== 0)
    return {
      error: `${file} may be read or written by other users (mode ${mode.toString(8).padStart(4, '0')}): chmod 600 it`,
    };
  try {
    const key = fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    return key === '' ? { error: `${file} is empty` } : { key };
  } catch (err) {
    return { error: `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
}

/**
 * The key of `name` (e.g. BATON_MASTER_KEY) from the variable itself or from `<name>_FILE`; both set is refused.
 * Answers the key (undefined when neither is set) or the problem, naming the variable.
 */
export function keyFromEnvOrFile(
  env: NodeJS.ProcessEnv,
  name: string,
): { key: string | undefined } | { problem: string } {
  const inline = env[name] || undefined;
  const file = env[`${name}_FILE`] || undefined;
  if (inline !== undefined && file !== undefined)
    return { problem: `${name}_FILE: give either ${name} or ${name}_FILE, not both` };
  if (file === undefined) return { key: inline };
  const read = readKeyFile(file);
  return 'key' in read ? { key: read.key } : { problem: `${name}_FILE: ${read.error}` };
}
