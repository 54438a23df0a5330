// A PostgreSQL cluster of a test's own (initdb into a temp dir, a spare port, its unix socket in that dir), for tests
// that stop and start the database under Baton. The shared cluster on 5432 is never touched: other tests use it.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './baton-process.js';

const exec = promisify(execFile);

/** The newest installed PostgreSQL's bin directory (Debian: /usr/lib/postgresql/<major>/bin), or undefined. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const majors = fs
    .readdirSync(root)
    .filter((d) => fs.existsSync(path.join(root, d, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] ? path.join(root, majors[0], 'bin') : undefined;
}

export interface PgCluster {
  /** postgres://…@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  start(): Promise<void>;
  /** `immediate`: the way a crash or a pulled plug stops it (no checkpoint, recovery at the next start). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Stops it if it runs and removes its directory. */
  destroy(): Promise<void>;
}

/**
 * initdb runs as the `postgres` system user when this process is root (PostgreSQL refuses root). Trust auth, no fsync:
 * a throwaway cluster whose durability is not under test (a stop still writes everything; only the OS cache is trusted).
 */
export async function createPgCluster(): Promise<PgCluster> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await exec('id', ['-u', 'postgres']);
    const { stdout: gid } = await exec('id', ['-g', 'postgres']);
    fs.chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  fs.chmodSync(dir, 0o700);
  const pg = (tool: string, args: string[]) =>
    asRoot
      ? exec('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args])
      : exec(path.join(bin, tool), args);
  const dataDir = path.join(dir, 'data');
  const port = await freePort();
  await pg('initdb', ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  let running = false;
  const cluster: PgCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await pg('pg_ctl', ['-D', dataDir, '-l', path.join(dir, 'log'), '-o', options, '-w', '-t', '60', 'start']);
      running = true;
    },
    async stop(mode = 'fast') {
      await pg('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '60', 'stop']);
      running = false;
    },
    async destroy() {
      if (running) await cluster.stop('immediate').catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  await cluster.start();
  return cluster;
}
