// The Galaxy requirements cache (`<cache>/<project>/<hash>/`, see run-requirements.ts) under retention: an entry's
// marker file is touched each time a run reuses it, so its mtime says when it was last used; entries unused since the
// cut-off (and install directories a crash left behind) are removed. An entry is renamed away before it is deleted:
// a run looking it up at that moment finds nothing complete and installs afresh, never a half-deleted tree.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Written last into a complete cache entry; its mtime is the entry's last use. */
export const REQUIREMENTS_COMPLETE_MARKER = '.complete';

/** Records that a run used this cache entry (best effort: a read-only cache still serves). */
export async function touchRequirementsEntry(entryDir: string): Promise<void> {
  const now = new Date();
  await fs.utimes(path.join(entryDir, REQUIREMENTS_COMPLETE_MARKER), now, now).catch(() => {});
}

async function subdirectories(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name));
}

/** Bytes of the regular files under `dir` (symlinks are not followed). */
async function treeBytes(dir: string): Promise<number> {
  let total = 0;
  for (const e of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) total += await treeBytes(full);
    else if (e.isFile()) total += (await fs.lstat(full).catch(() => ({ size: 0 }))).size;
  }
  return total;
}

/** When the entry was last used: its marker's mtime, or (an incomplete install) the directory's own. */
async function lastUse(entryDir: string): Promise<number> {
  const marker = await fs.lstat(path.join(entryDir, REQUIREMENTS_COMPLETE_MARKER)).catch(() => undefined);
  if (marker?.isFile()) return marker.mtimeMs;
  return (await fs.lstat(entryDir)).mtimeMs;
}

/** Removes (or, on a dry run, counts) the cache entries under `root` last used before `cutoff`. */
export async function pruneRequirementsCache(
  root: string,
  cutoff: Date,
  dryRun: boolean,
): Promise<{ entries: number; bytes: number }> {
  const result = { entries: 0, bytes: 0 };
  for (const projectDir of await subdirectories(root)) {
    for (const entry of await subdirectories(projectDir)) {
      const used = await lastUse(entry).catch(() => undefined);
      if (used === undefined || used >= cutoff.getTime()) continue;
      result.bytes += await treeBytes(entry);
      result.entries += 1;
      if (dryRun) continue;
      const doomed = `${entry}.tmp-pruned-${crypto.randomBytes(4).toString('hex')}`;
      if (
        await fs.rename(entry, doomed).then(
          () => true,
          () => false,
        )
      )
        await fs.rm(doomed, { recursive: true, force: true });
    }
    // A project whose every entry went leaves no empty directory behind (one in use is not empty).
    if (!dryRun) await fs.rmdir(projectDir).catch(() => {});
  }
  return result;
}
