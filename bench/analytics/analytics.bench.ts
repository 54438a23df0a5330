// bench/analytics: p50/p99 of the observation endpoints over a long history (issue 14: every p99 under 100 ms at
// 200,000 runs, and 10× the history costing under 1.5× the time). Seeds a realistic history (history.ts) through
// recordRollups, the function the run ingester calls in the transaction that finishes a run, then serves the real
// app in-process and times sequential requests as an admin and as an operator who sees runs through `use` grants
// on a few projects (a different query). First --runs-small runs, then up to --runs-large in the same database.
//
//   node --import ./scripts/ts/register.mjs bench/analytics/analytics.bench.ts [--sqlite | --postgres]
//     [--runs-small 20000] [--runs-large 200000] [--batch 250] [--samples 200] [--warmup 10] [--keep]
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type SqliteModule from 'better-sqlite3';
import type pgModule from 'pg';
import { generateMasterKey, Keyring, type Principal, recordRollups, systemClock, toRunHostRows } from '@baton/core';
import type { Database, DialectName } from '@baton/db';
import { createTestDatabase } from '@baton/db/testing';
import { createApp } from '../../apps/api/src/app.js';
import { createLogger } from '../../apps/api/src/logger.js';
import { databaseGauges } from '../../apps/api/src/system/metrics.js';
import { createServices } from '../../apps/api/src/wiring.js';
import { createHistory, createWorld, HOSTS_PER_RUN, type People, type World } from './history.js';
import { get, type Row, table, timeRoundRobin } from './measure.js';

const args = process.argv.slice(2);
const num = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const n = Number(args[i + 1]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} needs a positive integer`);
  return n;
};
const SMALL = num('--runs-small', 20_000);
const LARGE = num('--runs-large', 200_000);
const BATCH = num('--batch', 250);
const SAMPLES = num('--samples', 200);
const WARMUP = num('--warmup', 10);
if (LARGE <= SMALL) throw new Error('--runs-large must be more than --runs-small');
const dialects: DialectName[] = args.includes('--sqlite')
  ? ['sqlite']
  : args.includes('--postgres')
    ? ['postgres']
    : ['sqlite', 'postgres'];
// pg and better-sqlite3 are packages/db's dependencies (the root has only their types): connections of the bench's
// own to settle the database after seeding and to measure its size.
const requireDb = createRequire(new URL('../../packages/db/package.json', import.meta.url));
const pg = requireDb('pg') as typeof pgModule;
const Sqlite = requireDb('better-sqlite3') as typeof SqliteModule;
// A full collection before each measurement (the flag set at run time, so the command line needs none).
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
/** Leave the database (and print where it is) for EXPLAIN; a PostgreSQL one is then yours to drop. */
const KEEP = args.includes('--keep');
const TARGET = { p99Ms: 100, ratio: 1.5 };
const OPERATOR_PROJECTS = 3;

/** The real services and app over the database, listening on a free local port. */
async function serve(db: Database) {
  const services = createServices(db, {
    keyring: new Keyring(generateMasterKey()),
    clock: systemClock,
    tokenTtlSeconds: 24 * 3600,
  });
  const { app } = createApp({
    services,
    ping: () => db.ping(),
    gauges: databaseGauges(db),
    logger: createLogger('error', { silent: true }),
    bodyLimitBytes: 1024 * 1024,
    trustProxy: false,
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await services.closeRuns();
  };
  return { services, port, close };
}

/** Users, projects and inventories as rows of their own (runs reference them), and the operator's grants. */
async function populate(db: Database, world: World, services: Awaited<ReturnType<typeof serve>>['services']) {
  const password = crypto.randomBytes(18).toString('base64url');
  const user = async (username: string, role: 'admin' | 'operator') => {
    const u = await services.users.createAs('system', { username, password, role });
    const { token } = await services.auth.login({ username, password }, '127.0.0.1');
    return { id: u.id, token };
  };
  const admin = await user('bench-admin', 'admin');
  const operator = await user('olga', 'operator');
  const others = await Promise.all(['alice', 'bob', 'deploy-bot'].map((n) => user(n, 'operator')));
  const at = new Date().toISOString();
  for (const p of world.projects)
    await db.repos.projects.insert({
      id: p.id,
      name: p.name,
      git_url: `https://git.example.com/ops/${p.name}.git`,
      branch: 'main',
      credential_id: null,
      last_commit: null,
      synced_at: at,
      created_by: admin.id,
      created_at: at,
      updated_at: at,
    });
  for (const inv of world.inventories) {
    await db.repos.inventories.insert({
      id: inv.id,
      name: inv.name,
      format: 'ini',
      content: `[all]\n${inv.hosts.join('\n')}\n`,
      groups: [{ name: 'all', hosts: inv.hosts, children: [] }],
      host_count: inv.hosts.length,
      created_by: admin.id,
      created_at: at,
      updated_at: at,
    });
    await db.repos.inventories.replaceHosts(
      inv.id,
      inv.hosts.map((host) => ({ host, groups: ['all'] })),
    );
  }
  // The operator sees the runs of a few projects (use grants) and their own.
  const granted = world.projects.slice(0, OPERATOR_PROJECTS).map((p) => p.id);
  const adminPrincipal: Principal = { id: admin.id, role: 'admin', username: 'bench-admin' };
  for (const object of granted)
    await services.grants.create(adminPrincipal, { subject: operator.id, object, level: 'use' });
  const people: People = {
    submitters: [
      ...others.map((o, i) => ({ id: o.id, weight: [3, 2, 6][i]! })),
      { id: admin.id, weight: 1 },
      { id: operator.id, weight: 1, projects: granted },
    ],
  };
  return { admin, operator, people, granted };
}

/** Runs [from, to) of the history: each batch's runs rows and rollups in one transaction. */
async function seed(db: Database, run: ReturnType<typeof createHistory>, from: number, to: number) {
  const t0 = performance.now();
  for (let k = from; k < to; k += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, to - k) }, (_, i) => run(k + i));
    await db.transaction(async (r) => {
      for (const f of batch) {
        await r.runs.insert(f.run);
        await r.runs.replaceHosts(f.run.id, toRunHostRows(f.run.id, f.stats));
      }
      await recordRollups(r, batch);
    });
    const done = Math.min(k + BATCH, to) - from;
    if (done % 20_000 < BATCH) process.stderr.write(`  seeded ${from + done} runs\r`);
  }
  process.stderr.write('\n');
  return (performance.now() - t0) / 1000;
}

async function onPostgres<T>(url: string, fn: (c: pgModule.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * After seeding, PostgreSQL as autovacuum would have left it by now: statistics, and the visibility map that lets
 * index-only scans skip the table (it vacuums insert-only tables too, since PostgreSQL 13). SQLite is never analyzed:
 * Baton does not.
 */
async function settle(dialect: DialectName, url: string): Promise<void> {
  if (dialect === 'postgres') await onPostgres(url, (c) => c.query('vacuum analyze'));
  else {
    // The write-ahead log checkpointed into the file, as a server's steady trickle of small writes keeps it.
    const handle = new Sqlite(url.slice('sqlite:'.length));
    handle.pragma('wal_checkpoint(TRUNCATE)');
    handle.close();
  }
}

async function sizeOf(dialect: DialectName, url: string): Promise<string> {
  let bytes: number;
  if (dialect === 'sqlite') {
    const file = url.slice('sqlite:'.length);
    bytes = [file, `${file}-wal`].reduce((s, f) => s + (fs.existsSync(f) ? fs.statSync(f).size : 0), 0);
  } else {
    const { rows } = await onPostgres(url, (c) =>
      c.query<{ n: string }>('select pg_database_size(current_database()) as n'),
    );
    bytes = Number(rows[0]!.n);
  }
  return `${(bytes / 2 ** 20).toFixed(0)} MiB`;
}

interface Probe {
  endpoint: string;
  caller: 'admin' | 'operator';
  path: string;
}

/** Every probe, timed round robin, after a garbage collection (seeding leaves plenty in this same process). */
async function measure(port: number, tokens: Record<Probe['caller'], string>, probes: Probe[]) {
  gc();
  const load = os.loadavg()[0]!.toFixed(2);
  const series = probes.map((p) => ({ name: `${p.endpoint} ${p.caller}`, token: tokens[p.caller], path: p.path }));
  const timings = await timeRoundRobin(port, series, SAMPLES, WARMUP);
  return { timings, load: `${load} → ${os.loadavg()[0]!.toFixed(2)}` };
}

/** What the history looks like through the API (a check that it is the history described, not the timing). */
async function describe(port: number, token: string, busy: string): Promise<string> {
  const json = async (p: string) => JSON.parse((await get(port, token, p)).body) as Array<Record<string, unknown>>;
  const fleet = await json('/v1/fleet?limit=500');
  const flaky = await json('/v1/fleet?flaky=true&limit=500');
  const drift = await json('/v1/drift?limit=500');
  const unassessed = await json('/v1/drift/unassessed?limit=500');
  const tasks = await json('/v1/tasks?limit=500');
  const hostRuns = await json(`/v1/hosts/${encodeURIComponent(busy)}/runs?limit=500`);
  const top = fleet[0]!;
  const slowing = tasks.filter((t) => (t.trend_pct as number | null) !== null && (t.trend_pct as number) > 10).length;
  return [
    `first fleet page: ${fleet.length} hosts, worst ${String(top.host)} (${String(top.failed)} failed, ${String(top.unreachable)} unreachable of ${String(top.runs)})`,
    `flaky (first page): ${flaky.length}`,
    `open drift (first page): ${drift.length}, hosts not assessed (first page): ${unassessed.length}`,
    `tasks (first page): ${tasks.length}, ${slowing} slowing down by over 10%`,
    `${busy}: ${hostRuns.length} runs on the first page`,
  ].join('; ');
}

async function benchDialect(dialect: DialectName): Promise<boolean> {
  const tdb = await createTestDatabase(dialect);
  const server = await serve(tdb.db);
  try {
    const world = createWorld();
    const { admin, operator, people, granted } = await populate(tdb.db, world, server.services);
    const run = createHistory(world, people, LARGE);
    // The operator's view: an inventory and a busy (canary group) host of a project granted to them.
    const project = world.projects.find((p) => p.id === granted[0])!;
    const inventory = world.inventories[project.inventories[0]]!;
    const busy = inventory.hosts[5]!;
    const probes: Probe[] = (['admin', 'operator'] as const).flatMap((caller) => [
      { endpoint: 'GET /v1/fleet', caller, path: '/v1/fleet' },
      { endpoint: 'GET /v1/fleet?inventory=…', caller, path: `/v1/fleet?inventory=${inventory.id}` },
      { endpoint: 'GET /v1/hosts/{host}/runs', caller, path: `/v1/hosts/${encodeURIComponent(busy)}/runs` },
      { endpoint: 'GET /v1/tasks', caller, path: '/v1/tasks' },
      { endpoint: 'GET /v1/tasks?host=…', caller, path: `/v1/tasks?host=${encodeURIComponent(busy)}` },
      { endpoint: 'GET /v1/drift', caller, path: '/v1/drift' },
    ]);
    const tokens = { admin: admin.token, operator: operator.token };

    /** Runs [from, to) into the history, then every probe. */
    const grow = async (from: number, to: number) => {
      const seconds = await seed(tdb.db, run, from, to);
      await settle(dialect, tdb.url);
      const n = (x: number) => x.toLocaleString('en');
      console.log(
        `${dialect}: seeded ${from ? `${n(to - from)} more` : n(to)} runs (${n((to - from) * HOSTS_PER_RUN)} host runs) in ${seconds.toFixed(1)} s = ${Math.round((to - from) / seconds)} runs/s; database ${await sizeOf(dialect, tdb.url)}`,
      );
      const { timings, load } = await measure(server.port, tokens, probes);
      console.log(`  at ${n(to)} runs (load average ${load}): ${await describe(server.port, admin.token, busy)}`);
      return timings;
    };
    const small = await grow(0, SMALL);
    const large = await grow(SMALL, LARGE);

    const rows: Row[] = probes.map((p) => ({
      endpoint: p.endpoint,
      caller: p.caller,
      small: small.get(`${p.endpoint} ${p.caller}`)!,
      large: large.get(`${p.endpoint} ${p.caller}`)!,
    }));
    const result = table(rows, { small: SMALL, large: LARGE }, TARGET);
    console.log(
      `\n${dialect} (${SAMPLES} requests each, round robin, after ${WARMUP} warm-up rounds; busy host ${busy}):\n${result.text}`,
    );
    console.log(
      `${dialect}: ${result.pass ? 'PASS' : 'FAIL'} (targets: p99 under ${TARGET.p99Ms} ms at ${LARGE} runs, p99 ratio under ${TARGET.ratio}×)\n`,
    );
    return result.pass;
  } finally {
    await server.close();
    if (KEEP) {
      await tdb.db.close();
      console.log(`${dialect}: kept the database at ${tdb.url}`);
    } else await tdb.drop();
  }
}

let pass = true;
for (const d of dialects) pass = (await benchDialect(d)) && pass;
console.log(pass ? 'analytics: PASS' : 'analytics: FAIL');
process.exitCode = pass ? 0 : 1;
