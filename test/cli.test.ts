// End to end: the real launcher (bin/baton → the built apps) in child processes, configured by environment.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import {
  ADMIN_PASSWORD,
  cleanupProcesses,
  freshEnv,
  getJson,
  login,
  type Result,
  run,
  serve,
  tempDir,
  withServer,
} from './support/baton-process.js';

afterAll(cleanupProcesses);

describe('bin/baton without a database', () => {
  it('prints the usage with --help and with no command', async () => {
    for (const args of [['--help'], ['-h'], ['help'], []]) {
      const r = await run(args, { BATON_DATA_DIR: tempDir('baton-cli-') });
      expect({ args, code: r.code }).toEqual({ args, code: 0 });
      expect(r.stdout).toMatch(/^Usage: baton <command>/m);
      for (const c of ['serve', 'worker', 'migrate', 'user create', 'user set-password', 'user list', 'key rotate'])
        expect(r.stdout).toContain(c);
    }
  });

  it.each([
    ['serve'],
    ['worker'],
    ['migrate'],
    ['user create'],
    ['user set-password'],
    ['user list'],
    ['key rotate'],
    ['user'],
    ['key'],
  ])('prints the usage of "%s" with --help and exits 0, touching nothing', async (command) => {
    const data = path.join(tempDir('baton-cli-'), 'data');
    // Even a bad configuration does not stand in the way of --help.
    const r = await run([...command.split(' '), '--help'], { BATON_DATA_DIR: data, BATON_PORT: 'not-a-port' });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(new RegExp(`^Usage: baton ${command}\\b`, 'm'));
    expect(fs.existsSync(data)).toBe(false);
  });

  it.each([
    [['frobnicate']],
    [['user', 'frobnicate']],
    [['key', 'forget']],
    [['user']],
    [['serve', '--no-such-option']],
    [['serve', 'extra-argument']],
    [['user', 'create', '--username']],
  ])('exits 2 with a message for the wrong usage %j', async (args) => {
    const r = await run(args, { BATON_DATA_DIR: path.join(tempDir('baton-cli-'), 'data') });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^baton: /);
    expect(r.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
  });

  it('exits 2 naming BATON_PORT when it is bad, before opening anything', async () => {
    const data = path.join(tempDir('baton-cli-'), 'data');
    for (const cmd of [['serve'], ['migrate'], ['user', 'list']]) {
      const r = await run(cmd, { BATON_DATA_DIR: data, BATON_PORT: '99999' });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('BATON_PORT');
    }
    expect(fs.existsSync(data)).toBe(false);
  });

  it('exits 2 with a one-line message naming BATON_DATABASE_URL when the database cannot be reached', async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const r = await run(['migrate'], {
      BATON_DATA_DIR: path.join(tempDir('baton-cli-'), 'data'),
      BATON_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/baton',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^baton: BATON_DATABASE_URL: cannot open and migrate the postgres database: .*ECONNREFUSED/,
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 2 naming BATON_DATABASE_URL when it is bad', async () => {
    const r = await run(['migrate'], {
      BATON_DATA_DIR: path.join(tempDir('baton-cli-'), 'data'),
      BATON_DATABASE_URL: 'mysql://localhost/baton',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('BATON_DATABASE_URL');
  });

  it('serve exits 2 naming BATON_PORT when the port is taken, and when BATON_REDIS_URL asks for queue mode', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as net.AddressInfo).port;
      const r = await run(['serve'], {
        BATON_DATA_DIR: path.join(tempDir('baton-cli-'), 'data'),
        BATON_PORT: String(port),
        BATON_ADMIN_PASSWORD: ADMIN_PASSWORD,
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('BATON_PORT');
      expect(r.stderr).toContain('EADDRINUSE');
      expect(r.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
    const redis = await run(['serve'], {
      BATON_DATA_DIR: path.join(tempDir('baton-cli-'), 'data'),
      BATON_REDIS_URL: 'redis://127.0.0.1:6379',
    });
    expect(redis.code).toBe(2);
    expect(redis.stderr).toContain('BATON_REDIS_URL');
  });

  it('baton worker without Redis exits 2 naming the missing variables', async () => {
    const none = await run(['worker'], {});
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('BATON_REDIS_URL');
    expect(none.stderr).toContain('BATON_WORKER_KEY');
    const keyOnly = await run(['worker'], { BATON_WORKER_KEY: 'k'.repeat(64) });
    expect(keyOnly.code).toBe(2);
    expect(keyOnly.stderr).toContain('BATON_REDIS_URL');
    expect(keyOnly.stderr).not.toContain('BATON_WORKER_KEY must');
  });
});

describe.each(DIALECTS)('bin/baton on %s', (dialect) => {
  it('migrate exits 0, and again on a migrated database', async () => {
    const env = await freshEnv(dialect);
    const first = await run(['migrate'], env);
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' });
    expect(first.stdout).toContain(`Database (${dialect})`);
    const second = await run(['migrate'], env);
    expect({ code: second.code, stderr: second.stderr }).toEqual({ code: 0, stderr: '' });
    if (dialect === 'sqlite') expect(fs.existsSync(path.join(env.BATON_DATA_DIR!, 'baton.db'))).toBe(true);
    else expect(fs.existsSync(path.join(env.BATON_DATA_DIR!, 'baton.db'))).toBe(false);
  });

  it('user create / list / set-password, then the new password signs in through serve', async () => {
    const env = await freshEnv(dialect);
    const created = await run(
      ['user', 'create', '--username', 'x', '--role', 'operator', '--password-stdin'],
      env,
      'first password 123\n',
    );
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    expect(created.stdout).toMatch(/Created x \(usr_\w+, role operator\)/);
    expect(created.stdout).not.toContain('first password 123');

    const list = await run(['user', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^usr_\w+\tx\toperator$/m);

    const generated = await run(['user', 'create', '--username', 'gen', '--role', 'viewer'], env);
    expect(generated.code).toBe(0);
    const genPassword = /Password, shown this once: (\S+)/.exec(generated.stdout)?.[1];
    expect(genPassword).toBeDefined();

    const short = await run(
      ['user', 'create', '--username', 'y', '--role', 'viewer', '--password-stdin'],
      env,
      'short\n',
    );
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/password: must be at least 12 characters/);
    const badRole = await run(
      ['user', 'create', '--username', 'z', '--role', 'overlord', '--password-stdin'],
      env,
      'long enough password\n',
    );
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toContain('--role');
    const badEmail = await run(
      ['user', 'create', '--username', 'e', '--role', 'viewer', '--email', 'not-an-address', '--password-stdin'],
      env,
      'long enough password\n',
    );
    expect(badEmail.code).toBe(2);
    expect(badEmail.stderr).toContain('--email');
    const withEmail = await run(
      ['user', 'create', '--username', 'm', '--role', 'viewer', '--email', 'm@example.org', '--password-stdin'],
      env,
      'long enough password\n',
    );
    expect(withEmail.code).toBe(0);
    const duplicate = await run(
      ['user', 'create', '--username', 'x', '--role', 'viewer', '--password-stdin'],
      env,
      'another password 1\n',
    );
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain('already exists');
    expect(duplicate.stderr).not.toMatch(/\n\s+at /);
    const after = await run(['user', 'list'], env);
    expect(after.stdout).not.toMatch(/\ty\t|\tz\t|\te\t/);
    expect(after.stdout).toMatch(/\tm\tviewer$/m);
    expect(after.stdout.match(/\tx\t/g)).toHaveLength(1);

    const setPw = await run(
      ['user', 'set-password', '--username', 'x', '--password-stdin'],
      env,
      'second password 456\n',
    );
    expect({ code: setPw.code, stderr: setPw.stderr }).toEqual({ code: 0, stderr: '' });
    expect(setPw.stdout).toContain('Password of x changed');
    const unknown = await run(
      ['user', 'set-password', '--username', 'nobody', '--password-stdin'],
      env,
      'second password 456\n',
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('nobody');
    const shortSet = await run(['user', 'set-password', '--username', 'x', '--password-stdin'], env, 'tiny\n');
    expect(shortSet.code).toBe(2);

    const exit = await withServer({ ...env, BATON_ADMIN_PASSWORD: ADMIN_PASSWORD }, async (s) => {
      expect((await login(s.base, 'x', 'first password 123')).status).toBe(401);
      expect((await login(s.base, 'x', 'second password 456')).status).toBe(200);
      expect((await login(s.base, 'gen', genPassword!)).status).toBe(200);
    });
    expect(exit.code).toBe(0);
  }, 180_000);

  it('serve with BATON_ADMIN_PASSWORD: ready, admin signs in, SIGTERM stops it with exit 0', async () => {
    const env = await freshEnv(dialect);
    const s = await serve({ ...env, BATON_ADMIN_PASSWORD: ADMIN_PASSWORD });
    let exit: Result | undefined;
    try {
      expect(s.output()).toContain('with the password from BATON_ADMIN_PASSWORD');
      expect(s.output()).not.toContain(ADMIN_PASSWORD);
      const admin = await login(s.base, 'admin', ADMIN_PASSWORD);
      expect(admin.status).toBe(200);
      const me = await fetch(`${s.base}/v1/auth/check`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${admin.token}` },
      });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { role: string }).role).toBe('admin');
      expect((await fetch(`${s.base}/healthz`)).status).toBe(200);
    } finally {
      exit = await s.stop();
    }
    expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
    const lines = exit.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { message: string });
    expect(lines.map((l) => l.message)).toEqual(expect.arrayContaining(['listening', 'shutting down', 'stopped']));
    expect(exit.stdout + exit.stderr).not.toContain(ADMIN_PASSWORD);
  }, 120_000);

  it('first start without BATON_ADMIN_PASSWORD prints a generated password once, and it signs in', async () => {
    const env = await freshEnv(dialect);
    let password: string | undefined;
    const first = await withServer(env, async (s) => {
      password = /Its password, shown this once: (\S+)/.exec(s.output())?.[1];
      expect(password).toBeDefined();
      expect((await login(s.base, 'admin', password!)).status).toBe(200);
      expect((await login(s.base, 'admin', `${password!}x`)).status).toBe(401);
    });
    expect(first.code).toBe(0);
    expect(first.stdout.split(password!).length - 1).toBe(1);
    const second = await withServer(env, async (s) => {
      expect((await login(s.base, 'admin', password!)).status).toBe(200);
    });
    expect(second.code).toBe(0);
    expect(second.stdout).not.toMatch(/password/i);
    expect(second.stdout).not.toContain(password!);
  }, 180_000);

  it('key rotate re-seals the audit signing key under a new master key', async () => {
    const env: Record<string, string> = { ...(await freshEnv(dialect)), BATON_ADMIN_PASSWORD: ADMIN_PASSWORD };
    const keyFile = path.join(env.BATON_DATA_DIR!, 'master.key');

    let keyId: string | undefined;
    await withServer(env, async (s) => {
      const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
      const exp = await getJson(s.base, '/v1/audit/export', token!);
      expect(exp.status).toBe(200);
      keyId = exp.body.key_id as string;
      expect(keyId).toMatch(/^[0-9a-f]{64}$/);
    });
    const oldKey = fs.readFileSync(keyFile, 'utf8');

    const rotated = await run(['key', 'rotate'], env);
    expect({ code: rotated.code, stderr: rotated.stderr }).toEqual({ code: 0, stderr: '' });
    expect(rotated.stdout).toMatch(/Re-encrypted 1 secret value\(s\) under master key [0-9a-f]{16}/);
    const newKey = fs.readFileSync(keyFile, 'utf8');
    expect(newKey).not.toBe(oldKey);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(path.join(env.BATON_DATA_DIR!, 'master.key.next'))).toBe(false);

    await withServer(env, async (s) => {
      const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
      const exp = await getJson(s.base, '/v1/audit/export', token!);
      expect(exp.status).toBe(200);
      expect(exp.body.key_id).toBe(keyId);
      const verify = await getJson(s.base, '/v1/audit/verify', token!);
      expect(verify.status).toBe(200);
      expect(verify.body.ok).toBe(true);
      const log = await getJson<Array<{ actor: string }>>(s.base, '/v1/audit?action=master_key.rotate', token!);
      expect(log.body.map((e) => e.actor)).toEqual(['cli']);
    });

    // The old key no longer opens the secret: it is sealed under the new one, and serve refuses to start
    // with a key that cannot open what is stored (instead of failing later, at the first export).
    fs.writeFileSync(keyFile, oldKey, { mode: 0o600 });
    const refused = await run(['serve'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /master key cannot open stored secrets \(server_keys\.private_key_enc: .*does not hold/,
    );
    fs.writeFileSync(keyFile, newKey, { mode: 0o600 });
  }, 240_000);

  it('key rotate finishes a rotation that stopped half-way, and refuses to seal under any other key meanwhile', async () => {
    const env: Record<string, string> = { ...(await freshEnv(dialect)), BATON_ADMIN_PASSWORD: ADMIN_PASSWORD };
    const keyFile = path.join(env.BATON_DATA_DIR!, 'master.key');
    const nextFile = path.join(env.BATON_DATA_DIR!, 'master.key.next');
    let keyId: string | undefined;
    await withServer(env, async (s) => {
      const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
      keyId = (await getJson<{ key_id: string }>(s.base, '/v1/audit/export', token!)).body.key_id;
    });
    expect(keyId).toMatch(/^[0-9a-f]{64}$/);
    const before = fs.readFileSync(keyFile, 'utf8');

    const garbage = await run(['key', 'rotate', '--new-key-stdin'], env, 'not a key\n');
    expect(garbage.code).toBe(2);
    expect(garbage.stderr).toContain('new key');
    expect(garbage.stderr).not.toMatch(/\n\s+at /);

    // A rotation that wrote its next key and stopped (say the machine went down).
    const pending = crypto.randomBytes(32);
    fs.writeFileSync(nextFile, `${pending.toString('base64')}\n`, { mode: 0o600 });
    const other = await run(['key', 'rotate', '--new-key-stdin'], env, `${crypto.randomBytes(32).toString('hex')}\n`);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('pending');
    expect(fs.readFileSync(keyFile, 'utf8')).toBe(before);
    expect(Buffer.from(fs.readFileSync(nextFile, 'utf8').trim(), 'base64').equals(pending)).toBe(true);

    const finish = await run(['key', 'rotate'], env);
    expect({ code: finish.code, stderr: finish.stderr }).toEqual({ code: 0, stderr: '' });
    expect(Buffer.from(fs.readFileSync(keyFile, 'utf8').trim(), 'base64').equals(pending)).toBe(true);
    expect(fs.existsSync(nextFile)).toBe(false);

    await withServer(env, async (s) => {
      const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
      const exp = await getJson(s.base, '/v1/audit/export', token!);
      expect(exp.status).toBe(200);
      expect(exp.body.key_id).toBe(keyId);
    });
  }, 240_000);

  it('key rotate refuses while a baton serve holds the SQLite database, and works once it stopped', async () => {
    const env: Record<string, string> = { ...(await freshEnv(dialect)), BATON_ADMIN_PASSWORD: ADMIN_PASSWORD };
    const keyFile = path.join(env.BATON_DATA_DIR!, 'master.key');
    await withServer(env, async () => {
      const before = fs.readFileSync(keyFile, 'utf8');
      const refused = await run(['key', 'rotate'], env);
      if (dialect === 'sqlite') {
        expect(refused.code).toBe(2);
        expect(refused.stderr).toMatch(/stop the running baton serve first: .*pid \d+/);
        expect(fs.readFileSync(keyFile, 'utf8')).toBe(before);
        expect(fs.existsSync(path.join(env.BATON_DATA_DIR!, 'master.key.next'))).toBe(false);
      } else {
        // PostgreSQL has no serve lock (replicas share the database): the README says to stop them first.
        expect(refused.code).toBe(0);
      }
    });
    const after = await run(['key', 'rotate'], env);
    expect({ code: after.code, stderr: after.stderr }).toEqual({ code: 0, stderr: '' });
  }, 180_000);

  it('serve reads BATON_MASTER_KEY_FILE once (never the data dir key) and refuses one other users may read', async () => {
    const env: Record<string, string> = { ...(await freshEnv(dialect)), BATON_ADMIN_PASSWORD: ADMIN_PASSWORD };
    const keyDir = tempDir('baton-cli-keyfile-');
    const keyFile = path.join(keyDir, 'master.key');
    fs.writeFileSync(keyFile, `${crypto.randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    const withFile = { ...env, BATON_MASTER_KEY_FILE: keyFile };
    const first = await withServer(withFile, async (s) => {
      expect((await login(s.base, 'admin', ADMIN_PASSWORD)).status).toBe(200);
    });
    expect(first.code).toBe(0);
    // The key came from the file: no key was generated into the data dir.
    expect(fs.existsSync(path.join(env.BATON_DATA_DIR!, 'master.key'))).toBe(false);
    fs.chmodSync(keyFile, 0o644);
    const refused = await run(['serve'], withFile);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/BATON_MASTER_KEY_FILE: .*mode 0644\): chmod 600 it/);
  }, 180_000);

  it('key rotate refuses to start without an existing master key', async () => {
    const env = await freshEnv(dialect);
    const r = await run(['key', 'rotate'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('BATON_MASTER_KEY');
    expect(fs.existsSync(path.join(env.BATON_DATA_DIR!, 'master.key'))).toBe(false);
  });
});
