// Shared by bench/load, bench/sse, bench/soak, bench/memory, bench/overhead, bench/dispatch and bench/scale: flags, a
// real `bin/baton` started with its output in a file (Node writes to a pipe synchronously: a reader that falls behind
// would stall the server and the figure would measure the reader), a fresh PostgreSQL database for `--database`, the
// JSON API, and what /proc says about a process tree.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BATON = path.join(root, 'bin/baton');
export const PASSWORD = 'bench password 12345';

/**
 * `--name value` flags with defaults; `--help` prints `usage` and exits. Durations accept `300`, `300s`, `10m`,
 * `2h` (read with `seconds()`).
 */
export function options(usage, defaults) {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usage.trim());
    process.exit(0);
  }
  const values = { ...defaults };
  for (let i = 0; i < args.length; i++) {
    if (!args[i].startsWith('--')) continue;
    const name = args[i].slice(2);
    if (!(name in defaults)) {
      console.error(`unknown flag --${name}\n\n${usage.trim()}`);
      process.exit(2);
    }
    const next = args[i + 1];
    if (typeof defaults[name] === 'boolean') values[name] = true;
    else {
      values[name] = next;
      i += 1;
    }
  }
  return values;
}

export function seconds(text) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(String(text));
  if (!m) throw new Error(`not a duration: ${text} (e.g. 300, 30s, 10m, 2h)`);
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600 }[m[2] ?? 's'];
}

export const percentile = (values, p) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
};

export const ms = (value) => (Number.isNaN(value) ? '–' : value < 10 ? value.toFixed(1) : String(Math.round(value)));
export const mib = (kib) => `${(kib / 1024).toFixed(1)} MiB`;

/**
 * `--database postgres://user@host:port/any` → a fresh database on that server, named for this bench and dropped
 * by `drop()`. Without a URL: SQLite in the data dir (nothing to drop).
 */
export function freshDatabase(url, bench) {
  if (!url) return { url: undefined, label: 'sqlite', drop() {} };
  const server = new URL(url);
  const name = `bench_${bench}_${Date.now()}_${crypto.randomBytes(3).toString('hex')}`;
  const admin = new URL(server);
  admin.pathname = '/postgres';
  const psql = (sql) => {
    const r = spawnSync('psql', [admin.toString(), '-qc', sql], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`psql ${sql}: ${r.stderr}`);
  };
  psql(`create database ${name}`);
  const fresh = new URL(server);
  fresh.pathname = `/${name}`;
  return {
    url: fresh.toString(),
    label: 'postgres',
    drop: () => psql(`drop database if exists ${name} with (force)`),
  };
}

/** Reads JSON lines appended to a log file, calling `onEntry` for each; `stop()` ends the polling. */
export function tailJsonLog(logFile, onEntry, intervalMs = 20) {
  let offset = 0;
  let partial = '';
  const fd = fs.openSync(logFile, 'r');
  const poll = () => {
    const size = fs.fstatSync(fd).size;
    if (size <= offset) return;
    const buffer = Buffer.alloc(size - offset);
    fs.readSync(fd, buffer, 0, buffer.length, offset);
    offset = size;
    const lines = (partial + buffer.toString('utf8')).split('\n');
    partial = lines.pop();
    for (const line of lines) {
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      onEntry(entry);
    }
  };
  const timer = setInterval(poll, intervalMs);
  return {
    poll,
    stop() {
      clearInterval(timer);
      poll();
      fs.closeSync(fd);
    },
  };
}

/**
 * Starts `bin/baton <argv>` with `env` over the caller's environment, its stdout and stderr in `<dataDir>/<name>.log`,
 * and resolves with the first log entry whose message is `ready` (`listening` for serve, `worker started` for a worker).
 */
export async function startBaton(argv, env, { dataDir, name, ready }) {
  const logFile = path.join(dataDir, `${name}.log`);
  const out = fs.openSync(logFile, 'w');
  const child = spawn(BATON, argv, { env: { ...process.env, ...env }, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  const entry = await new Promise((resolve, reject) => {
    const deadline = setTimeout(() => finish(new Error(`${name} did not log "${ready}" within 60 s`)), 60_000);
    const onExit = (code) => finish(new Error(`${name} exited with ${code}`));
    const tail = tailJsonLog(logFile, (e) => e.message === ready && finish(undefined, e), 50);
    function finish(err, e) {
      clearTimeout(deadline);
      child.off('exit', onExit);
      tail.stop();
      if (err) reject(new Error(`${err.message}:\n${fs.readFileSync(logFile, 'utf8').slice(-3000)}`));
      else resolve(e);
    }
    child.once('exit', onExit);
  });
  return {
    child,
    entry,
    logFile,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * A real `baton serve` in embedded mode (or queue mode with BATON_REDIS_URL in `env`) on a free port, a data dir of
 * its own, signed in as admin, with an inventory of `localhost`.
 */
export async function startServe({ bench, env = {}, database }) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `baton-bench-${bench}-`));
  const server = await startBaton(
    ['serve'],
    {
      BATON_PORT: '0',
      BATON_DATA_DIR: dataDir,
      BATON_ADMIN_PASSWORD: PASSWORD,
      BATON_LOG_LEVEL: 'info',
      BATON_RUN_GRACE_SECONDS: '1',
      ...(database ? { BATON_DATABASE_URL: database } : {}),
      ...env,
    },
    { dataDir, name: 'serve', ready: 'listening' },
  );
  const client = apiClient(server.entry.url.replace(/\/$/, ''));
  const { token } = await client.call('POST', '/v1/auth/login', undefined, { username: 'admin', password: PASSWORD });
  const inventory = await client.call('POST', '/v1/inventories', token, {
    name: `bench-${bench}`,
    content: 'localhost ansible_connection=local\n',
  });
  return {
    ...server,
    dataDir,
    baseUrl: client.baseUrl,
    client,
    token,
    inventory,
    async stop() {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export class ApiError extends Error {
  constructor(method, url, status, body) {
    super(`${method} ${url}: ${status} ${JSON.stringify(body)}`);
    this.status = status;
  }
}

export function apiClient(baseUrl) {
  return {
    baseUrl,
    async call(method, url, token, body) {
      const res = await fetch(`${baseUrl}${url}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let json;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = text;
      }
      if (!res.ok) throw new ApiError(method, url, res.status, json);
      return json;
    },
  };
}

/**
 * Reads a run's event stream to its end (`event: end`), returning the events as `{seq, kind, ts, data, receivedAt}`
 * (`ts` and `receivedAt` in epoch ms; `receivedAt` is when the chunk holding the event arrived).
 * `onEvent` sees each as it arrives; `onOpen` is called once the response's headers are in; `signal` aborts.
 * node:http rather than fetch, and without onEvent the JSON is parsed after the stream ends: bench/sse runs a
 * thousand of these in one process beside the server, and fetch's web streams and a parse per event made the
 * clients, not the server, the larger share of the two cores.
 */
export function followRun(baseUrl, token, runId, onEvent, { onOpen, signal } = {}) {
  const url = `${baseUrl}/v1/runs/${runId}/stream`;
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { authorization: `Bearer ${token}` }, signal }, (res) => {
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => reject(new ApiError('GET', `/v1/runs/${runId}/stream`, res.statusCode, body)));
        return;
      }
      onOpen?.();
      const events = [];
      const unparsed = [];
      const toEvent = ({ seq, kind, data, receivedAt }) => {
        // the data line is the whole envelope {run_id, seq, ts, kind, data}; ts is stamped by the executor
        const envelope = JSON.parse(data);
        return { seq, kind, ts: Date.parse(envelope.ts), data: envelope.data, receivedAt };
      };
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        res.destroy();
        try {
          resolve(events.concat(unparsed.map(toEvent)));
        } catch (err) {
          reject(err);
        }
      };
      let buffer = '';
      res.on('data', (chunk) => {
        if (settled) return;
        const receivedAt = Date.now();
        buffer += chunk;
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let seq;
          let kind = 'message';
          let data = '';
          for (const line of frame.split('\n')) {
            if (line.startsWith('id:')) seq = Number(line.slice(3).trim());
            else if (line.startsWith('event:')) kind = line.slice(6).trim();
            else if (line.startsWith('data:')) data += line.slice(5).trim();
          }
          if (kind === 'end') return finish();
          if (seq === undefined) continue; // a heartbeat comment
          const raw = { seq, kind, data, receivedAt };
          if (onEvent) {
            const event = toEvent(raw);
            events.push(event);
            onEvent(event);
          } else unparsed.push(raw);
        }
      });
      res.on('end', finish);
      res.on('error', (err) => (settled ? undefined : ((settled = true), reject(err))));
    });
    req.on('error', (err) => reject(err));
  });
}

/** A playbook of `tasks` debug tasks on every host of the inventory. */
export const debugPlaybook = (tasks, tag = 'bench') =>
  `- hosts: all\n  gather_facts: false\n  tasks:\n` +
  Array.from({ length: tasks }, (_, i) => `    - ansible.builtin.debug: { msg: "${tag} ${i + 1}" }\n`).join('');

/** Checks a finished run's events: seq 1..n without a gap, the last one the `status` that finished it. */
export function eventsComplete(events) {
  const problems = [];
  events.forEach((e, i) => {
    if (e.seq !== i + 1) problems.push(`seq ${e.seq} at position ${i + 1}`);
  });
  const last = events[events.length - 1];
  if (!last || last.kind !== 'status' || last.data?.status !== 'finished')
    problems.push(
      `last event is ${last ? `${last.kind} ${JSON.stringify(last.data)}` : 'missing'}, not the finishing status`,
    );
  return problems;
}

// ---- /proc ----

const readProc = (pid, file) => {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
};

/** VmRSS of one process in KiB (0 once it is gone). */
export function rssKiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readProc(pid, 'status') ?? '');
  return m ? Number(m[1]) : 0;
}

/** Open file descriptors of one process (0 once it is gone). */
export function fdCount(pid) {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

/**
 * CPU time (user + system) one process has used, in ms (0 once it is gone). /proc counts in clock ticks, which are
 * 100 a second on Linux's usual builds (USER_HZ): 10 ms resolution, fine over many runs.
 */
export function cpuMs(pid) {
  const stat = readProc(pid, 'stat');
  if (!stat) return 0;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export function commandLine(pid) {
  return (readProc(pid, 'cmdline') ?? '').split('\0').filter(Boolean).join(' ');
}

/** `pid` and all its descendants, parents first. */
export function processTree(pid) {
  const children = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProc(name, 'stat');
    if (!stat) continue;
    // the command sits in parentheses and may hold spaces: fields after the last ')' are fixed
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(name));
  }
  const tree = [];
  const walk = (p) => {
    tree.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return tree;
}

/** The node process `bin/baton` exec'd into is the child's own pid (the launcher uses `exec`). */
export function treeMemory(pid) {
  const processes = processTree(pid).map((p) => ({ pid: p, rss: rssKiB(p), fds: fdCount(p), cmd: commandLine(p) }));
  return { processes, rss: processes.reduce((sum, p) => sum + p.rss, 0) };
}

export const sleep = (msValue) => new Promise((r) => setTimeout(r, msValue));
