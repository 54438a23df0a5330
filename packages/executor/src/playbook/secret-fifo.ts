// A secret served through a named pipe: ansible reads `--become-password-file` / `--vault-password-file`
// from it, and the secret never lands on disk. It is served to ONE open: ansible opens each password file
// once per run, and a FIFO cannot tell a second reader from a first one that has not yet read its end of
// file, so reopening for the next reader could hand the first reader the secret twice (a wrong password).
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import fs from 'node:fs/promises';

export interface SecretFifo {
  path: string;
  /** Stops serving; a writer still waiting for its reader is released. */
  close(): Promise<void>;
}

export async function serveSecretThroughFifo(fifoPath: string, secret: string): Promise<SecretFifo> {
  // Node has no mkfifo(); the coreutils command creates it with the mode given, never readable by others.
  execFileSync('mkfifo', ['-m', '600', fifoPath]);
  let closed = false;
  const serve = async () => {
    // Opening for writing blocks until a reader opens the pipe.
    const handle = await fs.open(fifoPath, constants.O_WRONLY);
    try {
      if (!closed) await handle.writeFile(secret);
    } finally {
      await handle.close();
    }
  };
  // A reader that goes away early (EPIPE) simply has no secret: ansible then reports the wrong password.
  const serving = serve().catch(() => undefined);
  return {
    path: fifoPath,
    async close() {
      if (closed) return;
      closed = true;
      // A writer blocked in open() holds a libuv thread until some reader shows up: be that reader.
      const release = await fs.open(fifoPath, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => undefined);
      await serving;
      await release?.close();
    },
  };
}
