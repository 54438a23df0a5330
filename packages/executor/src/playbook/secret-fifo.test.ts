import { afterAll, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../testing/index.js';
import { serveSecretThroughFifo } from './secret-fifo.js';

const dir = tempDir('baton-fifo-test');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it('serves the secret to its reader, is private, and writes nothing after close', async () => {
  const fifo = await serveSecretThroughFifo(path.join(dir, 'become.fifo'), 's3cret');
  const stat = fs.statSync(fifo.path);
  expect(stat.isFIFO()).toBe(true);
  expect(stat.mode & 0o777).toBe(0o600);
  expect(await fs.promises.readFile(fifo.path, 'utf8')).toBe('s3cret');
  await fifo.close();
  // nobody writes any more: a non-blocking read finds no data
  const handle = await fs.promises.open(fifo.path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  const { bytesRead } = await handle.read(Buffer.alloc(16), 0, 16, null).catch(() => ({ bytesRead: 0 }));
  await handle.close();
  expect(bytesRead).toBe(0);
});

it('closes while nobody ever opened it', async () => {
  const fifo = await serveSecretThroughFifo(path.join(dir, 'vault.fifo'), 'unused');
  await expect(fifo.close()).resolves.toBeUndefined();
});
