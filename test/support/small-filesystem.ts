// A filesystem of a few megabytes that a test can fill up: tmpfs, or a loop-mounted ext4 image where tmpfs is refused.
// Mounting needs root (CI runs as root).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export interface SmallFilesystem {
  /** where it is mounted */
  dir: string;
  kind: 'tmpfs' | 'ext4 loop';
  /** Writes a file that takes every free byte left (ENOSPC ends it); returns its path. */
  fill(): string;
  /** Unmounts it and removes what was made. */
  destroy(): Promise<void>;
}

const MB = 1024 * 1024;

export async function mountSmallFilesystem(sizeMb: number): Promise<SmallFilesystem> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-smallfs-'));
  const dir = path.join(root, 'mnt');
  fs.mkdirSync(dir);
  let kind: SmallFilesystem['kind'] = 'tmpfs';
  try {
    await exec('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0755`, 'tmpfs', dir]);
  } catch (tmpfsError) {
    const image = path.join(root, 'fs.img');
    try {
      fs.writeFileSync(image, Buffer.alloc(0));
      fs.truncateSync(image, sizeMb * MB);
      await exec('mkfs.ext4', ['-q', '-F', image]);
      await exec('mount', ['-o', 'loop', image, dir]);
      kind = 'ext4 loop';
    } catch (loopError) {
      fs.rmSync(root, { recursive: true, force: true });
      throw new Error(
        `cannot mount a small filesystem (needs root): tmpfs: ${(tmpfsError as Error).message}; ` +
          `ext4 loop: ${(loopError as Error).message}`,
      );
    }
  }
  return {
    dir,
    kind,
    fill() {
      const filler = path.join(dir, 'filler');
      const fd = fs.openSync(filler, 'w');
      const chunk = Buffer.alloc(64 * 1024, 1);
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      } finally {
        fs.closeSync(fd);
      }
      // Whatever was left below one chunk, byte by byte in smaller pieces.
      const small = fs.openSync(filler, 'a');
      try {
        for (;;) fs.writeSync(small, Buffer.alloc(512, 1));
      } catch {
        // full
      } finally {
        fs.closeSync(small);
      }
      return filler;
    },
    async destroy() {
      // Lazy: a process the test failed to end must not keep the mount (and the test) hanging.
      await exec('umount', ['-l', dir]).catch(() => {});
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
