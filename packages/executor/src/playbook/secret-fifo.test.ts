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

it('holds no libuv thread while waiting for readers: file I/O goes on with many unread FIFOs', async () => {
  // libuv has four threads; a blocking open() per FIFO would take all of them and this read would hang.
  const fifos = await Promise.all(
    Array.from({ length: 6 }, (_, i) => serveSecretThroughFifo(path.join(dir, `many-${i}.fifo`), `secret-${i}`)),
  );
  const probe = path.join(dir, 'probe.txt');
  fs.writeFileSync(probe, 'still responsive');
  expect(await fs.promises.readFile(probe, 'utf8')).toBe('still responsive');
  // Each FIFO still serves its own secret to a reader that shows up late.
  expect(await fs.promises.readFile(fifos[5]!.path, 'utf8')).toBe('secret-5');
  await Promise.all(fifos.map((f) => f.close()));
});

it('serves a secret larger than the pipe buffer whole to a reader that drains it slowly', async () => {
  const big = Array.from({ length: 4000 }, (_, i) => `line ${i} ${'x'.repeat(40)}\n`).join(''); // ~190 kB, three pipe buffers
  const fifo = await serveSecretThroughFifo(path.join(dir, 'big.fifo'), big);
  const handle = await fs.promises.open(fifo.path, fs.constants.O_RDONLY);
  const chunks: Buffer[] = [];
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 2)); // the writer finds the pipe full meanwhile
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(16_384), 0, 16_384, null);
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
  }
  await handle.close();
  expect(Buffer.concat(chunks).toString('utf8')).toBe(big);
  await fifo.close();
});
