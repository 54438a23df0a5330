// A secret served through a named pipe: ansible reads `--become-password-file` / `--vault-password-file`
// from it, and the secret never lands on disk. It is served to ONE open: ansible opens each password file
// once per run, and a FIFO cannot tell a second reader from a first one that has not yet read its end of
// file, so reopening for the next reader could hand the first reader the secret twice (a wrong password).
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import fs from 'node:fs/promises';

/** How often a served FIFO looks for its reader (ansible opens the file right after it starts). */
const READER_POLL_MS = 20;
/** How often a write waits for the reader to drain a full pipe. */
const FULL_PIPE_POLL_MS = 5;

export interface SecretFifo {
  path: string;
  /** Stops serving; a writer still waiting for its reader is released. */
  close(): Promise<void>;
}

/**
 * Writes all of `data` to a non-blocking pipe: a write may take only part of it, or none (EAGAIN) while the pipe
 * is full, e.g. a run's environment of many variables, larger than the pipe's 64 KiB, that the reader drains.
 */
async function writeAll(handle: fs.FileHandle, data: Buffer, stopped: () => boolean): Promise<void> {
  let offset = 0;
  while (offset < data.length && !stopped()) {
    try {
      offset += (await handle.write(data, offset, data.length - offset)).bytesWritten;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      await new Promise((resolve) => setTimeout(resolve, FULL_PIPE_POLL_MS));
    }
  }
}

export async function serveSecretThroughFifo(fifoPath: string, secret: string): Promise<SecretFifo> {
  // Node has no mkfifo(); the coreutils command creates it with the mode given, never readable by others.
  execFileSync('mkfifo', ['-m', '600', fifoPath]);
  let closed = false;
  const serve = async () => {
    while (!closed) {
      let handle: fs.FileHandle;
      try {
        // Non-blocking: the open fails with ENXIO while no reader has the pipe open. A blocking open would
        // park one of libuv's four threads until ansible opens the file, and four such waits (or one run
        // that never starts ansible) would freeze every file, DNS and crypto call of the whole server.
        handle = await fs.open(fifoPath, constants.O_WRONLY | constants.O_NONBLOCK);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err;
        await new Promise((resolve) => setTimeout(resolve, READER_POLL_MS));
        continue;
      }
      try {
        await writeAll(handle, Buffer.from(secret), () => closed);
      } finally {
        await handle.close();
      }
      return;
    }
  };
  // A reader that goes away early (EPIPE) simply has no secret: ansible then reports the wrong password.
  const serving = serve().catch(() => undefined);
  return {
    path: fifoPath,
    async close() {
      closed = true;
      await serving;
    },
  };
}
