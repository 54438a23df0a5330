// A PostgreSQL cluster of a test's own that accepts only TLS connections (pg_hba: hostssl only), on a spare loopback
// port, with the given certificate. The shared cluster on 5432 is never touched.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './baton-process.js';
import type { CertificateFiles } from './tls-files.js';

const exec = promisify(execFile);

export interface TlsPostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres, without TLS parameters */
  url: string;
  stop(): Promise<void>;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const major = fs
    .readdirSync(root)
    .filter((d) => fs.existsSync(path.join(root, d, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))[0];
  if (!major) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
  return path.join(root, major, 'bin');
}

/** initdb and pg_ctl run as the `postgres` user when this process is root (PostgreSQL refuses root). */
export async function startTlsPostgres(certificate: CertificateFiles): Promise<TlsPostgres> {
  const bin = binDir();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-pgtls-'));
  const asRoot = process.getuid?.() === 0;
  const run = (tool: string, args: string[]) =>
    asRoot
      ? exec('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args])
      : exec(path.join(bin, tool), args);
  const cert = path.join(dir, 'server.crt');
  const key = path.join(dir, 'server.key');
  fs.copyFileSync(certificate.cert, cert);
  fs.copyFileSync(certificate.key, key);
  fs.chmodSync(key, 0o600);
  if (asRoot) {
    const uid = Number((await exec('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await exec('id', ['-g', 'postgres'])).stdout.trim());
    for (const p of [dir, cert, key]) fs.chownSync(p, uid, gid);
  }
  const data = path.join(dir, 'data');
  await run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
  // Only TLS over TCP; the unix socket stays for pg_ctl's own readiness check.
  fs.writeFileSync(path.join(data, 'pg_hba.conf'), 'local all all trust\nhostssl all all 127.0.0.1/32 trust\n');
  const port = await freePort();
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c ssl=on',
    `-c ssl_cert_file=${cert}`,
    `-c ssl_key_file=${key}`,
  ].join(' ');
  await run('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-o', options, '-w', '-t', '60', 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']).catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
