// One distinct canary in every kind of secret Baton holds (SQLite; embedded mode, then queue mode with a `baton worker`
// on Redis): each credential type's secret inputs,
// a survey password answer (launched, and stored in a trigger), the trigger's and the notifier's secrets, the AI
// provider key, API tokens, the master and worker keys. Real runs use them (env, vault, become, ssh key with a
// passphrase, a survey password printed by debug); a notifier and the AI provider are called. Then each canary is
// searched for in the database file and its -wal/-shm, the server's (and worker's) log, every HTTP answer and SSE stream
// the test read, the run directories and (queue mode) every Redis key of the installation. A secret may appear there
// only sealed; a generated one only in the one answer that shows it.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from '@jest/globals';
import { createRepo } from '@baton/executor/testing';
import { Redis } from 'ioredis';
import { openSse } from '../../apps/api/src/testing/sse-client.js';
import {
  ADMIN_PASSWORD,
  cleanupProcesses,
  type Daemon,
  daemon,
  login,
  serve,
  type Server,
  tempDir,
  waitFor,
} from '../support/baton-process.js';
import { finishedRun, LOCAL_INVENTORY, recordingClient } from './support.js';

const exec = promisify(execFile);
afterAll(cleanupProcesses);

const tag = crypto.randomBytes(4).toString('hex');
/** Distinct, unmistakable, and free of characters any schema refuses. */
const canary = (kind: string) => `CANARY${kind}${tag}${crypto.randomBytes(6).toString('hex')}`;

/** A fake provider and notification endpoint on loopback: records what it was sent, answers 500. */
async function recordingEndpoint() {
  const received: string[] = [];
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push(`${req.method} ${req.url}\n${JSON.stringify(req.headers)}\n${body}`);
      res.writeHead(500, { 'Content-Type': 'application/json' }).end('{"error":{"message":"fake provider down"}}');
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  return { received, base: `http://127.0.0.1:${port}`, close: () => new Promise((r) => srv.close(r)) };
}

/** Every file under `dir` (following nothing), with its bytes. */
function filesUnder(dir: string): Array<{ file: string; bytes: Buffer }> {
  if (!fs.existsSync(dir)) return [];
  const out: Array<{ file: string; bytes: Buffer }> = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const file = path.join(entry.parentPath, entry.name);
    if (entry.isFile()) out.push({ file, bytes: fs.readFileSync(file) });
  }
  return out;
}

const REDIS_URL = process.env.BATON_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Every key of the installation's prefix with its whole content (each type read its own way), as bytes. */
async function redisContents(prefix: string): Promise<Array<{ key: string; bytes: Buffer }>> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const out: Array<{ key: string; bytes: Buffer }> = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        const parts: Buffer[] =
          type === 'string'
            ? [(await redis.getBuffer(key)) ?? Buffer.alloc(0)]
            : type === 'hash'
              ? Object.entries(await redis.hgetallBuffer(key)).flatMap(([f, v]) => [Buffer.from(f), v])
              : type === 'list'
                ? await redis.lrangeBuffer(key, 0, -1)
                : type === 'set'
                  ? await redis.smembersBuffer(key)
                  : type === 'zset'
                    ? await redis.zrangeBuffer(key, '0', '-1')
                    : type === 'stream'
                      ? (await redis.xrangeBuffer(key, '-', '+')).flatMap(([id, fields]) => [id, ...fields])
                      : [Buffer.from(`unread type ${type}`)];
        out.push({ key, bytes: Buffer.concat(parts.map((p) => Buffer.concat([p, Buffer.from('\n')]))) });
      }
    } while (cursor !== '0');
    return out;
  } finally {
    redis.disconnect();
  }
}

describe.each(['embedded', 'queue'] as const)('secrets canary in %s mode', (mode) => {
  it('finds no secret in clear text in the database, WAL, logs, answers, streams, run directories or Redis', async () => {
    const root = tempDir('baton-canary-');
    const dataDir = path.join(root, 'data');
    const workDir = path.join(root, 'work');
    fs.mkdirSync(workDir);
    const masterKey = crypto.randomBytes(32);
    const workerKey = crypto.randomBytes(32);
    const endpoint = await recordingEndpoint();

    // Canaries the test chooses. Keys: their hex (as given), base64 and raw bytes are all searched for.
    const secrets: Record<string, string | Buffer> = {
      env: canary('env'),
      vault: canary('vault'),
      become: canary('become'),
      passphrase: canary('passphrase'),
      token: canary('token'),
      registry: canary('registry'),
      galaxy: canary('galaxy'),
      survey: canary('survey'),
      triggerSurvey: canary('trgsurvey'),
      webhookHeader: canary('header'),
      slackUrl: canary('slack'),
      emailPassword: canary('email'),
      aiKey: canary('aikey'),
      masterKeyHex: masterKey.toString('hex'),
      masterKeyBase64: masterKey.toString('base64'),
      masterKeyRaw: masterKey,
      workerKeyHex: workerKey.toString('hex'),
      workerKeyBase64: workerKey.toString('base64'),
      workerKeyRaw: workerKey,
    };
    // An ssh key encrypted with the passphrase canary: its private body is a secret too.
    const keyFile = path.join(root, 'id_ed25519');
    await exec('ssh-keygen', ['-q', '-t', 'ed25519', '-N', secrets.passphrase as string, '-f', keyFile]);
    const privateKey = fs.readFileSync(keyFile, 'utf8');
    secrets.privateKeyBody = privateKey.split('\n')[2]!;
    // A vaulted variable the run decrypts with the vault password canary.
    const vaultPass = path.join(root, 'vault-pass');
    fs.writeFileSync(vaultPass, secrets.vault as string);
    const vaulted = (
      await exec('ansible-vault', ['encrypt_string', '--vault-password-file', vaultPass, 'plain', '--name', 'vaulted'])
    ).stdout;
    fs.rmSync(vaultPass);

    // Queue mode: the runs go through Redis (sealed bundles, the event stream) to a `baton worker` process.
    const prefix = `baton_t_${Date.now()}_canary_${tag}`;
    const queue = mode === 'queue' ? { BATON_REDIS_URL: REDIS_URL, BATON_QUEUE_PREFIX: prefix } : undefined;
    const server: Server = await serve({
      BATON_DATA_DIR: dataDir,
      BATON_WORK_DIR: workDir,
      BATON_ADMIN_PASSWORD: ADMIN_PASSWORD,
      BATON_MASTER_KEY: secrets.masterKeyHex as string,
      BATON_WORKER_KEY: secrets.workerKeyHex as string,
      BATON_NOTIFY_ALLOW_PRIVATE: 'true',
      BATON_SANDBOX: 'off',
      ...(queue ?? { BATON_EXECUTORS: '1' }),
    });
    const worker: Daemon | undefined = queue
      ? daemon(['worker', '--name', `canary-${tag}`, '--concurrency', '2'], {
          ...queue,
          BATON_WORKER_KEY: secrets.workerKeyHex as string,
          BATON_WORK_DIR: workDir,
          BATON_SANDBOX: 'off',
        })
      : undefined;
    // Generated secrets: each may appear in the one answer that shows it (index into the client's answers).
    const generated: Array<{ name: string; value: string; shownIn: number }> = [];
    try {
      const session = await login(server.base, 'admin', ADMIN_PASSWORD);
      const client = recordingClient(server.base, session.token!);
      const post = async (url: string, body: unknown, expected = 201) => {
        const a = await client.request('POST', url, body);
        if (a?.status !== expected) throw new Error(`POST ${url} answered ${a?.status}: ${a?.body.slice(0, 800)}`);
        return JSON.parse(a!.body) as Record<string, unknown> & { id: string };
      };
      const personal = await post('/v1/tokens', { name: 'canary token' });
      generated.push({ name: 'personal token', value: personal.token as string, shownIn: client.answers.length - 1 });

      const inv = await post('/v1/inventories', { name: 'local', content: LOCAL_INVENTORY });
      const cred = (type: string, inputs: Record<string, unknown>) =>
        post('/v1/credentials', { name: type, type, inputs });
      const runCreds = [
        await cred('env', { variables: { APP_SECRET: secrets.env } }),
        await cred('vault_password', { password: secrets.vault }),
        await cred('become_password', { password: secrets.become, method: 'sudo' }),
        await cred('ssh_key', { private_key: privateKey, passphrase: secrets.passphrase }),
      ].map((c) => c.id);
      await cred('token', { token: secrets.token });
      await cred('registry', { url: 'https://registry.example.com', username: 'ci', password: secrets.registry });
      await cred('galaxy', { url: 'https://galaxy.example.com/api/', token: secrets.galaxy });

      // A run that uses every run credential: env printed (the executor masks it), vault decrypted, become.
      const playbook =
        '- hosts: all\n  gather_facts: false\n  vars:\n' +
        vaulted
          .split('\n')
          .filter(Boolean)
          .map((l) => `    ${l}`)
          .join('\n') +
        '\n  tasks:\n' +
        "    - ansible.builtin.debug: {msg: \"env={{ lookup('env', 'APP_SECRET') }}\"}\n" +
        '    - ansible.builtin.assert: {that: ["vaulted == \'plain\'"]}\n' +
        '      no_log: true\n' +
        '    - ansible.builtin.command: id -u\n      become: true\n';
      const run = await post('/v1/runs', { playbook, inventory_id: inv.id, credential_ids: runCreds });
      const stream = await openSse(`${server.base}/v1/runs/${run.id}/stream`, {
        Authorization: `Bearer ${session.token!}`,
      });

      // A template whose survey asks a password, launched with the canary and printed by debug; a trigger storing one.
      const tpl = await post('/v1/templates', {
        name: 'survey',
        kind: 'run',
        spec: {
          playbook:
            '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug: {msg: "pw={{ pw }}"}\n',
          inventory_id: inv.id,
        },
        survey: [{ variable: 'pw', question: 'Password?', type: 'password', required: true }],
      });
      const launched = await post(`/v1/templates/${tpl.id}/launch`, { survey_answers: { pw: secrets.survey } });
      // A trigger runs a project's playbook: a template of a local git project, its survey answer stored in the trigger.
      const repo = createRepo(root);
      const project = await post('/v1/projects', { name: 'site', git_url: repo.url });
      const projectTpl = await post('/v1/templates', {
        name: 'survey of a project',
        kind: 'run',
        spec: { project_id: project.id, playbook: 'site.yml', inventory_id: inv.id },
        survey: [{ variable: 'pw', question: 'Password?', type: 'password', required: true }],
      });
      const trigger = await post('/v1/triggers', {
        name: 'canary trigger',
        target: { template_id: projectTpl.id, survey_answers: { pw: secrets.triggerSurvey } },
      });
      generated.push({ name: 'trigger secret', value: trigger.secret as string, shownIn: client.answers.length - 1 });
      // Its token is not searched for: it is the hook's address (hook_url), shown to the trigger's managers by design.

      // Notifiers: called when the runs finish (the endpoint records the delivery, answers 500).
      const webhook = await post('/v1/notifiers', {
        name: 'hook',
        kind: 'webhook',
        config: { url: `${endpoint.base}/hook`, headers: { 'X-Api-Key': secrets.webhookHeader } },
        events: ['run.succeeded', 'run.failed'],
      });
      generated.push({ name: 'notifier secret', value: webhook.secret as string, shownIn: client.answers.length - 1 });
      await post('/v1/notifiers', {
        name: 'slack',
        kind: 'slack',
        config: { url: `${endpoint.base}/slack/${secrets.slackUrl as string}` },
        events: ['run.succeeded'],
      });
      await post('/v1/notifiers', {
        name: 'mail',
        kind: 'email',
        config: {
          host: '127.0.0.1',
          port: 9,
          security: 'none',
          username: 'ci',
          password: secrets.emailPassword,
          from: 'baton@example.com',
          to: ['ops@example.com'],
        },
        events: ['run.succeeded'],
      });

      for (const id of [run.id, launched.id])
        expect(await finishedRun(server, session.token!, id)).toMatchObject({ conclusion: 'succeeded' });
      await stream.until((st) => st.ended(), 'the run stream to end', 30_000);

      // The AI key, stored and used against the fake provider (which fails: 502).
      const ai = await client.request('PUT', '/v1/settings/ai', {
        provider: 'openai',
        base_url: `${endpoint.base}/v1`,
        model: 'gpt-test',
        api_key: secrets.aiKey,
      });
      expect(ai?.status).toBe(200);
      expect((await client.request('POST', `/v1/runs/${run.id}/explain`, {}))?.status).toBe(502);

      // Reads of everything that holds a secret, and of the runs.
      for (const url of [
        '/v1/credentials',
        '/v1/notifiers',
        '/v1/triggers',
        `/v1/triggers/${trigger.id}`,
        `/v1/templates/${tpl.id}`,
        '/v1/settings/ai',
        '/v1/tokens',
        `/v1/runs/${run.id}`,
        `/v1/runs/${launched.id}`,
        `/v1/runs/${run.id}/logs`,
        `/v1/runs/${launched.id}/logs`,
        `/v1/runs/${run.id}/events?limit=1000`,
        `/v1/runs/${launched.id}/events?limit=1000`,
        '/v1/audit?limit=500',
      ])
        await client.request('GET', url);
      const launchedLog = client.answers.find((a) => a.url === `/v1/runs/${launched.id}/logs`)!.body;
      expect(launchedLog).toContain('pw=********');
      const runLog = client.answers.find((a) => a.url === `/v1/runs/${run.id}/logs`)!.body;
      expect(runLog).toContain('env=********');
      // The secrets were really used: the provider and the webhook were sent theirs.
      // (Deliveries go out from the notification loop, a moment after the run's end is stored.)
      await waitFor('the webhook delivery of a finished run', async () =>
        endpoint.received.join('\n').includes(secrets.webhookHeader as string) ? true : undefined,
      );
      expect(endpoint.received.join('\n')).toContain(secrets.aiKey as string);

      expect((await server.stop()).code).toBe(0);
      if (worker) expect((await worker.stop()).code).toBe(0);
      const redisKeys = queue ? await redisContents(prefix) : [];
      // The search is not vacuous: the runs' jobs (their sealed bundles) are still in Redis, kept for a day.
      if (queue) expect(redisKeys.map((k) => k.key)).toContain(`${prefix}:runs:${run.id}`);

      // Where to look, and what was found.
      const places: Array<{ where: string; bytes: Buffer }> = [
        ...filesUnder(dataDir).map((f) => ({ where: f.file, bytes: f.bytes })),
        ...filesUnder(workDir).map((f) => ({ where: `run directory ${f.file}`, bytes: f.bytes })),
        { where: 'server log', bytes: Buffer.from(server.output()) },
        ...(worker ? [{ where: 'worker log', bytes: Buffer.from(worker.output()) }] : []),
        ...redisKeys.map((k) => ({ where: `Redis key ${k.key}`, bytes: k.bytes })),
        { where: 'SSE stream', bytes: Buffer.from(JSON.stringify(stream.frames)) },
        ...client.answers.map((a, i) => ({
          where: `answer #${i} ${a.method} ${a.url}`,
          bytes: Buffer.from(`${a.status} ${a.body}`),
        })),
      ];
      expect(places.some((p) => p.where.endsWith('baton.db'))).toBe(true);
      const found: string[] = [];
      for (const [name, value] of Object.entries(secrets)) {
        const needle = typeof value === 'string' ? Buffer.from(value) : value;
        for (const p of places) if (p.bytes.includes(needle)) found.push(`${name} in ${p.where}`);
      }
      for (const g of generated) {
        for (const p of places) {
          if (p.where.startsWith(`answer #${g.shownIn} `)) continue;
          if (p.bytes.includes(Buffer.from(g.value))) found.push(`${g.name} in ${p.where}`);
        }
      }
      for (const p of places)
        if (p.bytes.includes(Buffer.from(session.token!)) && !p.where.startsWith('answer #'))
          found.push(`session token in ${p.where}`);
      expect(found).toEqual([]);
    } finally {
      await server.kill();
      await worker?.stop();
      await endpoint.close();
      if (queue) {
        const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
        const keys = await redis.keys(`${prefix}:*`);
        if (keys.length) await redis.del(...keys);
        redis.disconnect();
      }
    }
  }, 240_000);
});
