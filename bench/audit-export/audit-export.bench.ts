// bench/audit-export: GET /v1/audit/export of a chain of 1,000,000 entries, over HTTP, in constant memory (issue 12).
// Fills a fresh SQLite database with chained entries (hashed by the chain's own rule, inserted in transactions of
// many rows per statement), starts the real app over it in a child process, downloads the export while sampling
// the server's resident memory from /proc, checks the document (entries counted and re-hashed on the fly, the
// signature verified), and prints the time and the server's peak RSS growth over its idle baseline.
//
//   node --import ./scripts/ts/register.mjs bench/audit-export/audit-export.bench.ts [--entries N] [--server-heap-mb M] [--keep]
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { AuditEntryRow } from '@baton/db';
import { openDatabase } from '@baton/db';
import { createServices } from '../../apps/api/src/wiring.js';
import { createApp } from '../../apps/api/src/app.js';
import { createLogger } from '../../apps/api/src/logger.js';
import { databaseGauges } from '../../apps/api/src/system/metrics.js';
import { entryHash, generateMasterKey, Keyring, systemClock } from '@baton/core';

const args = process.argv.slice(2);
const arg = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const SELF = fileURLToPath(import.meta.url);
const GENESIS = '0'.repeat(64);
const ROWS_PER_STATEMENT = 1_000;
const STATEMENTS_PER_TRANSACTION = 50;

/** The server half: the real services and app over the filled database, a signed-in admin, and the port. */
async function serve(file: string): Promise<void> {
  const db = openDatabase(`sqlite:${file}`);
  const services = createServices(db, {
    keyring: new Keyring(generateMasterKey()),
    clock: systemClock,
    tokenTtlSeconds: 3600,
  });
  const { app } = createApp({
    services,
    ping: () => db.ping(),
    gauges: databaseGauges(db),
    logger: createLogger('error', { silent: true }),
    bodyLimitBytes: 1024 * 1024,
    trustProxy: false,
  });
  const password = crypto.randomBytes(18).toString('base64url');
  await services.users.createAs('system', { username: 'bench', password, role: 'admin' });
  const { token } = await services.auth.login({ username: 'bench', password }, '127.0.0.1');
  const server = app.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`${JSON.stringify({ port, token })}\n`);
  });
  process.on('SIGTERM', () => server.close(() => void db.close().then(() => process.exit(0))));
}

/** Chained entries into a fresh database, in transactions of many multi-row INSERTs. */
async function fill(file: string, total: number): Promise<void> {
  const db = openDatabase(`sqlite:${file}`);
  await db.migrate();
  const t0 = Date.now();
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  let prev = GENESIS;
  let seq = 0;
  while (seq < total) {
    await db.kysely.transaction().execute(async (tx) => {
      for (let s = 0; s < STATEMENTS_PER_TRANSACTION && seq < total; s++) {
        const rows: AuditEntryRow[] = [];
        for (let i = 0; i < ROWS_PER_STATEMENT && seq < total; i++) {
          seq++;
          const entry = {
            seq,
            at: new Date(start + seq * 250).toISOString(),
            actor: `usr_01JBENCH${String(seq % 97).padStart(16, '0')}`,
            action: ['run.submit', 'template.update', 'auth.login', 'grant.create'][seq % 4]!,
            object: seq % 5 ? `run_01JBENCH${String(seq).padStart(14, '0')}` : null,
            summary: `submitted run ${seq} of template deploy-web (check: false, limit: web*) from 10.0.${seq % 256}.${seq % 200}`,
          };
          const hash = entryHash(prev, entry);
          rows.push({ ...entry, prev_hash: prev, hash });
          prev = hash;
        }
        await tx.insertInto('audit_entries').values(rows).execute();
      }
      await tx.updateTable('audit_head').set({ seq, hash: prev }).where('id', '=', 1).execute();
    });
    if (seq % 200_000 === 0 || seq === total) process.stderr.write(`  filled ${seq} entries\n`);
  }
  await db.close();
  console.log(
    `fill: ${total} entries in ${((Date.now() - t0) / 1000).toFixed(1)} s (${(fs.statSync(file).size / 2 ** 20).toFixed(0)} MiB)`,
  );
}

function rssKiB(pid: number): { rss: number; hwm: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]);
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/** Downloads the export, re-hashing every entry as it passes (the client holds one entry at a time). */
function download(port: number, token: string, onChunk: () => void) {
  return new Promise<{ bytes: number; entries: number; head: { seq: number; hash: string }; signatureOk: boolean }>(
    (resolve, reject) => {
      http
        .get(
          { host: '127.0.0.1', port, path: '/v1/audit/export', headers: { Authorization: `Bearer ${token}` } },
          (res) => {
            if (res.statusCode !== 200) return reject(new Error(`export answered ${res.statusCode}`));
            let bytes = 0;
            let buffer = '';
            let prev = GENESIS;
            let entries = 0;
            let inEntries = false;
            let tail = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              bytes += Buffer.byteLength(chunk);
              onChunk();
              if (!inEntries) {
                buffer += chunk;
                const at = buffer.indexOf('"entries":[');
                if (at < 0) return;
                inEntries = true;
                tail = buffer.slice(0, at);
                chunk = buffer.slice(at + '"entries":['.length);
                buffer = '';
              }
              if (inEntries && entries >= 0) {
                buffer += chunk;
                // Entries are flat objects: each ends at the first '}' outside a string.
                let startAt = 0;
                for (;;) {
                  while (buffer[startAt] === ',') startAt++;
                  if (buffer[startAt] !== '{') break;
                  const end = objectEnd(buffer, startAt);
                  if (end < 0) break;
                  const e = JSON.parse(buffer.slice(startAt, end + 1)) as AuditEntryRow;
                  entries++;
                  if (e.seq !== entries || e.prev_hash !== prev || entryHash(prev, e) !== e.hash)
                    return reject(new Error(`entry ${entries} does not chain`));
                  prev = e.hash;
                  startAt = end + 1;
                }
                buffer = buffer.slice(startAt);
              }
            });
            res.on('end', () => {
              // What is left: `],"key_id":…}`; the opening fields were kept in `tail`.
              const doc = JSON.parse(`${tail}"entries":[${buffer}`) as {
                head: { seq: number; hash: string };
                public_key: string;
                signed_message: string;
                signature: string;
              };
              const signatureOk = crypto.verify(
                null,
                Buffer.from(doc.signed_message),
                doc.public_key,
                Buffer.from(doc.signature, 'base64'),
              );
              if (doc.head.seq !== entries || doc.head.hash !== prev) return reject(new Error('head does not match'));
              resolve({ bytes, entries, head: doc.head, signatureOk });
            });
            res.on('error', reject);
          },
        )
        .on('error', reject);
    },
  );
}

/** Index of the '}' closing the flat object starting at `from`, or -1 if it has not arrived yet. */
function objectEnd(text: string, from: number): number {
  let inString = false;
  for (let i = from + 1; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '}') return i;
  }
  return -1;
}

async function main(): Promise<void> {
  if (args[0] === '--serve') return serve(args[1]!);
  const total = Number(arg('--entries') ?? 1_000_000);
  if (!Number.isInteger(total) || total < 1) throw new Error('--entries needs a positive integer');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-bench-audit-'));
  const file = path.join(dir, 'baton.db');
  try {
    await fill(file, total);
    // --server-heap-mb caps the server's V8 heap: an export that held the chain in memory could not finish under it.
    const heap = arg('--server-heap-mb');
    const heapFlags = heap ? [`--max-old-space-size=${Number(heap)}`] : [];
    const child = spawn(process.execPath, [...heapFlags, ...process.execArgv, SELF, '--serve', file], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const { port, token } = JSON.parse(
      await new Promise<string>((resolve) => readline.createInterface({ input: child.stdout! }).once('line', resolve)),
    ) as { port: number; token: string };
    const before = rssKiB(child.pid!);
    let peak = before.rss;
    let samples = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssKiB(child.pid!).rss);
      samples++;
    }, 25);
    const t0 = process.hrtime.bigint();
    let chunks = 0;
    const result = await download(port, token, () => chunks++);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    clearInterval(sampler);
    const after = rssKiB(child.pid!);
    peak = Math.max(peak, after.rss);
    child.kill('SIGTERM');
    console.log(
      `audit export: ${result.entries} entries, ${(result.bytes / 2 ** 20).toFixed(0)} MiB in ${seconds.toFixed(1)} s ` +
        `(${Math.round(result.entries / seconds)} entries/s), chain and signature ${result.signatureOk ? 'verified' : 'NOT VERIFIED'}`,
    );
    if (heap) console.log(`server V8 heap capped at ${heap} MiB (--max-old-space-size)`);
    console.log(
      `server RSS: ${(before.rss / 1024).toFixed(0)} MiB idle, peak ${(peak / 1024).toFixed(0)} MiB while exporting ` +
        `(growth ${((peak - before.rss) / 1024).toFixed(0)} MiB; ${samples} samples; VmHWM ${(after.hwm / 1024).toFixed(0)} MiB)`,
    );
  } finally {
    if (!args.includes('--keep')) fs.rmSync(dir, { recursive: true, force: true });
    else console.log(`kept ${file}`);
  }
}

await main();
