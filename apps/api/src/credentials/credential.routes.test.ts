import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCredentialService, generateMasterKey, Keyring, resealAllSecrets, systemClock } from '@baton/core';
import { DIALECTS } from '@baton/db/testing';
import type { Response } from 'supertest';
import { bearer, createHarness, type Harness, expectProblem } from '../testing/harness.js';

const UNKNOWN_CRED = 'cred_01ARZ3NDEKTSV4RRFFQ69G5FAV';
const PASSPHRASE = 'correct-passphrase-42';
let seq = 0;
const credName = (stem = 'cred') => `${stem} ${++seq} ${Date.now().toString(36)}`;

// Real keys, made once: an OpenSSH ed25519 key without and with a passphrase (ssh-keygen) and an encrypted RSA PEM key.
const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-cred-keys-'));
function sshKeygen(name: string, passphrase: string): string {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', '', '-f', path.join(keyDir, name)]);
  return fs.readFileSync(path.join(keyDir, name), 'utf8');
}
const ED25519 = sshKeygen('open', '');
const ED25519_LOCKED = sshKeygen('locked', PASSPHRASE);
const rsaPem = (passphrase: string) =>
  crypto.generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase },
  }).privateKey;
const RSA_LOCKED = rsaPem(PASSPHRASE);
afterAll(() => fs.rmSync(keyDir, { recursive: true, force: true }));

/** One valid body of each type; `secret` is in every secret input (for ssh_key: the passphrase of a fresh key). */
const bodies = (secret: string) => ({
  ssh_key: {
    type: 'ssh_key',
    inputs: { private_key: rsaPem(`pp-${secret}`), passphrase: `pp-${secret}`, username: 'deploy' },
  },
  vault_password: { type: 'vault_password', inputs: { password: `vault-${secret}`, vault_id: 'prod' } },
  env: { type: 'env', inputs: { variables: { AWS_SECRET_ACCESS_KEY: `aws-${secret}`, _private: `p-${secret}` } } },
  token: { type: 'token', inputs: { token: `ghp_${secret}` } },
  become_password: { type: 'become_password', inputs: { password: `sudo ${secret}`, method: 'sudo', user: 'root' } },
  registry: {
    type: 'registry',
    inputs: { url: 'https://registry.example.com', username: 'robot', password: `reg-${secret}` },
  },
});

describe.each(DIALECTS)('credentials on %s', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect);
  });
  afterAll(() => h.close());

  const post = (token: string, body: object) => h.http.post('/v1/credentials').set(bearer(token)).send(body);
  const put = (token: string, id: string, body: object) =>
    h.http.put(`/v1/credentials/${id}`).set(bearer(token)).send(body);
  const create = async (token: string, body: object) => {
    const res = await post(token, { name: credName(), ...body });
    expect(res.status).toBe(201);
    return res;
  };
  const grant = async (subject: string, object: string, level: 'use' | 'manage') =>
    expect((await h.http.post('/v1/grants').set(bearer(h.admin.token)).send({ subject, object, level })).status).toBe(
      201,
    );
  const names = async (token: string) =>
    (await h.http.get('/v1/credentials?limit=500').set(bearer(token))).body.map(
      (c: { name: string }) => c.name,
    ) as string[];

  it.each<[string, object, Record<string, string>, string[]]>([
    ['ssh_key (OpenSSH, no passphrase)', { type: 'ssh_key', inputs: { private_key: ED25519 } }, {}, ['private_key']],
    [
      'ssh_key (encrypted OpenSSH)',
      { type: 'ssh_key', inputs: { private_key: ED25519_LOCKED, passphrase: PASSPHRASE, username: 'ci' } },
      { username: 'ci' },
      ['passphrase', 'private_key'],
    ],
    [
      'ssh_key (encrypted PEM)',
      { type: 'ssh_key', inputs: { private_key: RSA_LOCKED, passphrase: PASSPHRASE } },
      {},
      ['passphrase', 'private_key'],
    ],
    [
      'vault_password',
      { type: 'vault_password', inputs: { password: 'v', vault_id: 'prod' } },
      { vault_id: 'prod' },
      ['password'],
    ],
    [
      'env',
      { type: 'env', inputs: { variables: { B_VAR: '2', A_VAR: '' } } },
      {},
      ['variables.A_VAR', 'variables.B_VAR'],
    ],
    ['token', { type: 'token', inputs: { token: 't' } }, {}, ['token']],
    [
      'become_password',
      { type: 'become_password', inputs: { password: 'p', method: 'community.general.doas', user: 'root' } },
      { method: 'community.general.doas', user: 'root' },
      ['password'],
    ],
    [
      'registry',
      { type: 'registry', inputs: { url: 'https://ghcr.io', username: 'me', password: 'p' } },
      { url: 'https://ghcr.io', username: 'me' },
      ['password'],
    ],
  ])(
    'creates a %s credential: 201 + Location, public inputs and secret field names only, manage for the creator',
    async (_what, body, inputs, secretFields) => {
      const op = await h.user('operator');
      const name = credName();
      const res = await post(op.token, { name, description: 'for tests', ...body });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^cred_[0-9A-HJKMNP-TV-Z]{26}$/),
        name,
        type: (body as { type: string }).type,
        description: 'for tests',
        inputs,
        secret_fields: secretFields,
        needs_secret: false,
        created_by: op.id,
        created_at: expect.any(String),
        updated_at: res.body.created_at,
      });
      expect(res.headers.location).toBe(`/v1/credentials/${res.body.id}`);
      const fetched = await h.http.get(res.headers.location as string).set(bearer(op.token));
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual(res.body);
      const grants = await h.http.get(`/v1/grants?object=${res.body.id}`).set(bearer(op.token));
      expect(grants.body).toEqual([expect.objectContaining({ subject: op.id, level: 'manage' })]);
      // The secret is stored: the internal reveal gives back exactly what was sent.
      expect((await h.services.credentials.reveal(res.body.id)).inputs).toEqual((body as { inputs: object }).inputs);
    },
  );

  it.each<[string, object, string]>([
    ['no inputs', { type: 'token' }, 'body.inputs'],
    ['no type', { inputs: { token: 't' } }, 'body.type'],
    ['an unknown type', { type: 'password', inputs: { password: 'p' } }, 'body.type'],
    ['an unknown top-level field', { type: 'token', inputs: { token: 't' }, owner: 'x' }, 'body'],
    ['an unknown input', { type: 'token', inputs: { token: 't', user: 'x' } }, 'body.inputs'],
    ['a missing private_key', { type: 'ssh_key', inputs: { username: 'u' } }, 'body.inputs.private_key'],
    ['a numeric token', { type: 'token', inputs: { token: 5 } }, 'body.inputs.token'],
    ['an empty password', { type: 'vault_password', inputs: { password: '' } }, 'body.inputs.password'],
    ['a token over 8192 characters', { type: 'token', inputs: { token: 't'.repeat(8193) } }, 'body.inputs.token'],
    ['env variables that are not a map', { type: 'env', inputs: { variables: ['A=1'] } }, 'body.inputs.variables'],
    ['no env variables', { type: 'env', inputs: { variables: {} } }, 'body.inputs.variables'],
    [
      'an env name starting with a digit',
      { type: 'env', inputs: { variables: { '1BAD': 'x' } } },
      'body.inputs.variables.1BAD',
    ],
    [
      'an env name with a dash',
      { type: 'env', inputs: { variables: { 'MY-VAR': 'x' } } },
      'body.inputs.variables.MY-VAR',
    ],
    [
      'a reserved BATON_ env name',
      { type: 'env', inputs: { variables: { baton_token: 'x' } } },
      'body.inputs.variables.baton_token',
    ],
    [
      'a reserved executor env name',
      { type: 'env', inputs: { variables: { SSH_AUTH_SOCK: '/tmp/x' } } },
      'body.inputs.variables.SSH_AUTH_SOCK',
    ],
    [
      'a dynamic-loader env name (loads code into the launcher)',
      { type: 'env', inputs: { variables: { LD_AUDIT: './audit.so' } } },
      'body.inputs.variables.LD_AUDIT',
    ],
    [
      'an interpreter env name (runs code in ansible)',
      { type: 'env', inputs: { variables: { PYTHONPATH: '.' } } },
      'body.inputs.variables.PYTHONPATH',
    ],
    ['a numeric env value', { type: 'env', inputs: { variables: { A: 1 } } }, 'body.inputs.variables.A'],
    [
      'an unparsable ssh key',
      {
        type: 'ssh_key',
        inputs: { private_key: '-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----' },
      },
      'body.inputs.private_key',
    ],
    [
      'a public key as ssh key',
      { type: 'ssh_key', inputs: { private_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI user@host' } },
      'body.inputs.private_key',
    ],
    [
      'a wrong passphrase for an encrypted PEM key',
      { type: 'ssh_key', inputs: { private_key: RSA_LOCKED, passphrase: 'wrong-passphrase' } },
      'body.inputs.passphrase',
    ],
    [
      'an encrypted PEM key without passphrase',
      { type: 'ssh_key', inputs: { private_key: RSA_LOCKED } },
      'body.inputs.passphrase',
    ],
    [
      'an encrypted OpenSSH key without passphrase',
      { type: 'ssh_key', inputs: { private_key: ED25519_LOCKED } },
      'body.inputs.passphrase',
    ],
    [
      'a username with a space',
      { type: 'ssh_key', inputs: { private_key: ED25519, username: 'a b' } },
      'body.inputs.username',
    ],
    [
      'a become method that is no plugin name',
      { type: 'become_password', inputs: { password: 'p', method: 'sudo -s' } },
      'body.inputs.method',
    ],
    [
      'a vault id with @',
      { type: 'vault_password', inputs: { password: 'p', vault_id: 'a@b' } },
      'body.inputs.vault_id',
    ],
    [
      'a registry URL carrying a password',
      { type: 'registry', inputs: { url: 'https://u:pw@r.example.com', username: 'u', password: 'p' } },
      'body.inputs.url',
    ],
    [
      'a registry URL that is not http(s)',
      { type: 'registry', inputs: { url: 'ftp://r.example.com', username: 'u', password: 'p' } },
      'body.inputs.url',
    ],
    [
      'a registry without username',
      { type: 'registry', inputs: { url: 'https://r.example.com', password: 'p' } },
      'body.inputs.username',
    ],
    ['a blank name', { name: '  ', type: 'token', inputs: { token: 't' } }, 'body.name'],
    [
      'a description of 1001 characters',
      { type: 'token', inputs: { token: 't' }, description: 'd'.repeat(1001) },
      'body.description',
    ],
  ])('rejects creating a credential with %s: 400, and creates nothing', async (_what, body, path) => {
    const name = credName('bad');
    const res = await post(h.admin.token, { name, ...body });
    expectProblem(res, 400, path);
    // No refusal echoes what was sent as a secret.
    for (const secret of [PASSPHRASE, 'wrong-passphrase', RSA_LOCKED.split('\n')[1]!, ED25519.split('\n')[1]!])
      expect(res.text).not.toContain(secret);
    expect(await names(h.admin.token)).not.toContain(name);
  });

  // The names the run engine and a run's isolation depend on: refused with the variable and the reason named,
  // at create and at update (env variables are replaced as a whole there), leaving the stored set as it was.
  it.each<[string, string]>([
    ['ANSIBLE_CONFIG', 'configuration, callbacks or plugins'],
    ['ANSIBLE_STDOUT_CALLBACK', 'configuration, callbacks or plugins'],
    ['ANSIBLE_CALLBACKS_ENABLED', 'configuration, callbacks or plugins'],
    ['ANSIBLE_STRATEGY_PLUGINS', 'configuration, callbacks or plugins'],
    ['ANSIBLE_COLLECTIONS_PATH', 'collections'],
    ['ANSIBLE_ROLES_PATH', 'roles'],
    ['ANSIBLE_PYTHON_INTERPRETER', 'Baton sets it'],
    ['SSH_ASKPASS', 'run a program'],
    ['GIT_SSH_COMMAND', 'run a program'],
    ['GIT_CONFIG_GLOBAL', 'run a program'],
    ['PYTHONPATH', 'load code'],
  ])('refuses the env variable %s at create and update: 400 naming it and why', async (name, why) => {
    const variables = { [name]: 'x', OK_VAR: 'y' };
    const created = await post(h.admin.token, { name: credName('reserved'), type: 'env', inputs: { variables } });
    expectProblem(created, 400, `body.inputs.variables.${name}`);
    expect(created.body.errors).toEqual([
      {
        path: `body.inputs.variables.${name}`,
        message: expect.stringMatching(new RegExp(`^${name} is reserved: .*${why}`)),
      },
    ]);
    const c = await create(h.admin.token, { type: 'env', inputs: { variables: { OK_VAR: 'y' } } });
    const updated = await put(h.admin.token, c.body.id, { inputs: { variables } });
    expectProblem(updated, 400, `body.inputs.variables.${name}`);
    expect(updated.body.errors[0].message).toContain(`${name} is reserved`);
    expect((await h.services.credentials.reveal(c.body.id)).inputs).toEqual({ variables: { OK_VAR: 'y' } });
  });

  it('refuses viewers (403) and anonymous callers (401); 409 for a duplicate name', async () => {
    const viewer = await h.user('viewer');
    expectProblem(await post(viewer.token, { name: credName(), type: 'token', inputs: { token: 't' } }), 403);
    expectProblem(
      await h.http.post('/v1/credentials').send({ name: credName(), type: 'token', inputs: { token: 't' } }),
      401,
    );
    expectProblem(await h.http.get('/v1/credentials'), 401);
    const first = await create(h.admin.token, { type: 'token', inputs: { token: 't' } });
    const dup = await post(h.admin.token, { name: first.body.name, type: 'env', inputs: { variables: { A: '1' } } });
    expectProblem(dup, 409);
    expect(dup.body.detail).toContain(first.body.name);
  });

  it('answers 404 for an unknown credential and 400 naming path.id for a malformed one', async () => {
    const admin = bearer(h.admin.token);
    expectProblem(await h.http.get(`/v1/credentials/${UNKNOWN_CRED}`).set(admin), 404);
    expectProblem(await h.http.put(`/v1/credentials/${UNKNOWN_CRED}`).set(admin).send({ name: 'x' }), 404);
    expectProblem(await h.http.delete(`/v1/credentials/${UNKNOWN_CRED}`).set(admin), 404);
    for (const bad of ['nope', 'team_01ARZ3NDEKTSV4RRFFQ69G5FAV', '%00']) {
      expectProblem(await h.http.get(`/v1/credentials/${bad}`).set(admin), 400, 'path.id');
      expectProblem(await h.http.put(`/v1/credentials/${bad}`).set(admin).send({ name: 'x' }), 400, 'path.id');
      expectProblem(await h.http.delete(`/v1/credentials/${bad}`).set(admin), 400, 'path.id');
    }
  });

  it('shows a credential only to holders of a grant: 404 without one, use reads but cannot change (403), manage changes', async () => {
    const owner = await h.user('operator');
    const c = await create(owner.token, { type: 'token', inputs: { token: 't' } });
    const id = c.body.id as string;
    const [stranger, user, manager, viewer] = [
      await h.user('operator'),
      await h.user('operator'),
      await h.user('operator'),
      await h.user('viewer'),
    ];
    expectProblem(await h.http.get(`/v1/credentials/${id}`).set(bearer(stranger.token)), 404);
    expectProblem(await put(stranger.token, id, { name: credName() }), 404);
    expectProblem(await h.http.delete(`/v1/credentials/${id}`).set(bearer(stranger.token)), 404);
    expect(await names(stranger.token)).not.toContain(c.body.name);

    await grant(user.id, id, 'use');
    await grant(viewer.id, id, 'manage');
    await grant(manager.id, id, 'manage');
    for (const reader of [user, viewer]) {
      const got = await h.http.get(`/v1/credentials/${id}`).set(bearer(reader.token));
      expect(got.status).toBe(200);
      expect(got.body.id).toBe(id);
      expect(await names(reader.token)).toContain(c.body.name);
      expectProblem(await put(reader.token, id, { name: credName() }), 403);
      expectProblem(await h.http.delete(`/v1/credentials/${id}`).set(bearer(reader.token)), 403);
    }
    const renamed = credName('renamed');
    const res = await put(manager.token, id, { name: renamed });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe(renamed);
    expect(await names(h.admin.token)).toContain(renamed);
  });

  it('lists newest first and pages with ?limit=1 and the Link header', async () => {
    const op = await h.user('operator');
    const older = await create(op.token, { type: 'token', inputs: { token: 't' } });
    // Ids order by millisecond: signing a user in between keeps the two apart in time.
    await h.user('viewer');
    const newer = await create(op.token, { type: 'token', inputs: { token: 't' } });
    const first = await h.http.get('/v1/credentials?limit=1').set(bearer(op.token));
    expect(first.body.map((c: { id: string }) => c.id)).toEqual([newer.body.id]);
    const link = /^<([^>]+)>; rel="next"$/.exec(first.headers.link as string);
    expect(link).not.toBeNull();
    const second = await h.http.get(link![1]!).set(bearer(op.token));
    expect(second.body.map((c: { id: string }) => c.id)).toEqual([older.body.id]);
    expect(second.headers.link).toBeUndefined();
  });

  describe('update', () => {
    const reveal = async (id: string) => (await h.services.credentials.reveal(id)).inputs as Record<string, unknown>;

    it('keeps omitted inputs, replaces given ones and clears optional ones set to null', async () => {
      const c = await create(h.admin.token, {
        type: 'ssh_key',
        description: 'd',
        inputs: { private_key: ED25519, username: 'deploy' },
      });
      const id = c.body.id as string;
      // Only the username: the key stays.
      const kept = await put(h.admin.token, id, { inputs: { username: 'ops' } });
      expect(kept.status).toBe(200);
      expect(kept.body).toMatchObject({
        inputs: { username: 'ops' },
        secret_fields: ['private_key'],
        description: 'd',
      });
      expect(await reveal(id)).toEqual({ private_key: ED25519, username: 'ops' });
      // Replace the key by an encrypted one together with its passphrase.
      const replaced = await put(h.admin.token, id, {
        inputs: { private_key: ED25519_LOCKED, passphrase: PASSPHRASE },
      });
      expect(replaced.body).toMatchObject({
        inputs: { username: 'ops' },
        secret_fields: ['passphrase', 'private_key'],
      });
      expect(await reveal(id)).toEqual({ private_key: ED25519_LOCKED, passphrase: PASSPHRASE, username: 'ops' });
      // Clear the username and the description.
      const cleared = await put(h.admin.token, id, { inputs: { username: null }, description: null });
      expect(cleared.body).toMatchObject({ inputs: {}, description: null });
      expect(await reveal(id)).toEqual({ private_key: ED25519_LOCKED, passphrase: PASSPHRASE });
      expect(cleared.body.updated_at >= c.body.updated_at).toBe(true);
      const fetched = await h.http.get(`/v1/credentials/${id}`).set(bearer(h.admin.token));
      expect(fetched.body).toEqual(cleared.body);
    });

    it('replaces env variables as a whole', async () => {
      const c = await create(h.admin.token, { type: 'env', inputs: { variables: { A: '1', B: '2' } } });
      const res = await put(h.admin.token, c.body.id, { inputs: { variables: { C: '3' } } });
      expect(res.body.secret_fields).toEqual(['variables.C']);
      expect(await reveal(c.body.id)).toEqual({ variables: { C: '3' } });
    });

    it.each<[string, object, object, string]>([
      ['changing the type', { type: 'token', inputs: { token: 't' } }, { type: 'env' }, 'body.type'],
      [
        'clearing a required input',
        { type: 'token', inputs: { token: 't' } },
        { inputs: { token: null } },
        'body.inputs.token',
      ],
      [
        'an input the type does not have',
        { type: 'token', inputs: { token: 't' } },
        { inputs: { username: 'x' } },
        'body.inputs',
      ],
      [
        'a wrongly typed input',
        { type: 'token', inputs: { token: 't' } },
        { inputs: { token: 7 } },
        'body.inputs.token',
      ],
      [
        'a bad env name',
        { type: 'env', inputs: { variables: { A: '1' } } },
        { inputs: { variables: { 'A B': '1' } } },
        'body.inputs.variables.A B',
      ],
      [
        'clearing the passphrase of an encrypted key',
        { type: 'ssh_key', inputs: { private_key: RSA_LOCKED, passphrase: PASSPHRASE } },
        { inputs: { passphrase: null } },
        'body.inputs.passphrase',
      ],
      [
        'a wrong passphrase for the stored key',
        { type: 'ssh_key', inputs: { private_key: RSA_LOCKED, passphrase: PASSPHRASE } },
        { inputs: { passphrase: 'nope' } },
        'body.inputs.passphrase',
      ],
      [
        'an unparsable key',
        { type: 'ssh_key', inputs: { private_key: ED25519 } },
        { inputs: { private_key: 'garbage' } },
        'body.inputs.private_key',
      ],
      ['an unknown field', { type: 'token', inputs: { token: 't' } }, { secret: 'x' }, 'body'],
      ['a blank name', { type: 'token', inputs: { token: 't' } }, { name: ' ' }, 'body.name'],
    ])('refuses %s (400) and changes nothing', async (_what, body, update, path) => {
      const c = await create(h.admin.token, body);
      const before = await reveal(c.body.id);
      expectProblem(await put(h.admin.token, c.body.id, update), 400, path);
      expect(await reveal(c.body.id)).toEqual(before);
      expect((await h.http.get(`/v1/credentials/${c.body.id}`).set(bearer(h.admin.token))).body).toEqual(c.body);
    });

    it('accepts `type` when it is the current type', async () => {
      const c = await create(h.admin.token, { type: 'token', inputs: { token: 't' } });
      const res = await put(h.admin.token, c.body.id, { type: 'token', inputs: { token: 'u' } });
      expect(res.status).toBe(200);
      expect(await reveal(c.body.id)).toEqual({ token: 'u' });
    });

    it('refuses an empty update (400) and leaves the credential and the audit trail as they were', async () => {
      const c = await create(h.admin.token, { type: 'token', inputs: { token: 't' } });
      const auditBefore = (await h.http.get('/v1/audit?limit=500').set(bearer(h.admin.token))).body.length;
      const res = await put(h.admin.token, c.body.id, {});
      expectProblem(res, 400);
      expect(res.body.errors).toEqual([
        expect.objectContaining({ message: 'give at least one of name, description, type, inputs' }),
      ]);
      expect((await h.http.get(`/v1/credentials/${c.body.id}`).set(bearer(h.admin.token))).body).toEqual(c.body);
      expect((await h.http.get('/v1/audit?limit=500').set(bearer(h.admin.token))).body.length).toBe(auditBefore);
    });

    it('answers 409 when renaming onto another credential’s name', async () => {
      const a = await create(h.admin.token, { type: 'token', inputs: { token: 't' } });
      const b = await create(h.admin.token, { type: 'token', inputs: { token: 't' } });
      expectProblem(await put(h.admin.token, b.body.id, { name: a.body.name }), 409);
    });
  });

  it('deletes a credential with its grants (204), then answers 404', async () => {
    const op = await h.user('operator');
    const c = await create(op.token, { type: 'token', inputs: { token: 't' } });
    const user = await h.user('operator');
    await grant(user.id, c.body.id, 'use');
    expect((await h.http.delete(`/v1/credentials/${c.body.id}`).set(bearer(op.token))).status).toBe(204);
    expectProblem(await h.http.get(`/v1/credentials/${c.body.id}`).set(bearer(op.token)), 404);
    expect((await h.http.get(`/v1/grants?object=${c.body.id}`).set(bearer(h.admin.token))).body).toEqual([]);
    expectProblem(await h.http.delete(`/v1/credentials/${c.body.id}`).set(bearer(op.token)), 404);
  });

  it('answers 409 to a delete while a row still references the credential, and keeps it', async () => {
    const c = await create(h.admin.token, { type: 'token', inputs: { token: 't' } });
    const now = new Date().toISOString();
    // A project written straight to the table: the delete is refused, naming the project that uses it.
    await h.tdb.db.kysely
      .insertInto('projects')
      .values({
        id: 'prj_01ARZ3NDEKTSV4RRFFQ69G5FAV',
        name: credName('project'),
        git_url: 'https://example.com/r.git',
        branch: 'main',
        credential_id: c.body.id,
        last_commit: null,
        synced_at: null,
        created_by: h.admin.id,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const res = await h.http.delete(`/v1/credentials/${c.body.id}`).set(bearer(h.admin.token));
    expectProblem(res, 409);
    expect(res.body.detail).toContain('project prj_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect((await h.http.get(`/v1/credentials/${c.body.id}`).set(bearer(h.admin.token))).status).toBe(200);
    expect((await h.http.get(`/v1/grants?object=${c.body.id}`).set(bearer(h.admin.token))).body).toHaveLength(1);
  });

  it('does not name users of the credential that the caller cannot see, only counts them', async () => {
    const owner = await h.user('operator');
    const c = await create(owner.token, { type: 'token', inputs: { token: 't' } });
    const now = new Date().toISOString();
    // Someone else's project, on which the owner holds no grant.
    await h.tdb.db.kysely
      .insertInto('projects')
      .values({
        id: 'prj_01ARZ3NDEKTSV4RRFFQ69G5FAX',
        name: credName('hidden project'),
        git_url: 'https://example.com/r.git',
        branch: 'main',
        credential_id: c.body.id,
        last_commit: null,
        synced_at: null,
        created_by: h.admin.id,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const res = await h.http.delete(`/v1/credentials/${c.body.id}`).set(bearer(owner.token));
    expectProblem(res, 409);
    expect(res.body.detail).toBe('credential is used by 1 more you cannot see');
  });

  it('records create, update and delete in the audit trail by name and type, with the changed field names', async () => {
    const op = await h.user('operator');
    const c = await create(op.token, { type: 'become_password', inputs: { password: 'p', method: 'sudo' } });
    expect((await put(op.token, c.body.id, { inputs: { password: 'q', method: null } })).status).toBe(200);
    expect((await h.http.delete(`/v1/credentials/${c.body.id}`).set(bearer(op.token))).status).toBe(204);
    const res = await h.http.get(`/v1/audit?object=${c.body.id}`).set(bearer(h.admin.token));
    expect(res.body.map((e: { action: string; actor: string }) => [e.action, e.actor])).toEqual([
      ['credential.delete', op.id],
      ['credential.update', op.id],
      ['credential.create', op.id],
    ]);
    expect(res.body.map((e: { summary: string }) => e.summary)).toEqual([
      `deleted become_password credential ${c.body.name}`,
      `updated become_password credential ${c.body.name}: inputs.password, inputs.method cleared`,
      `created become_password credential ${c.body.name}`,
    ]);
  });
});

describe.each(DIALECTS)('credential secrets on %s', (dialect) => {
  const CANARY = `CANARY${crypto.randomBytes(8).toString('hex')}`;
  let h: Harness;
  const logs: Buffer[] = [];
  beforeAll(async () => {
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => logs.push(chunk));
    h = await createHarness(dialect, { logStream });
  });
  afterAll(() => h.close());

  /** Every stored byte: SQLite's file and its write-ahead log, or every row of every PostgreSQL table. */
  async function databaseDump(): Promise<Buffer> {
    if (dialect === 'sqlite') {
      const file = h.tdb.url.slice('sqlite:'.length);
      return Buffer.concat([file, `${file}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)));
    }
    const k = h.tdb.db.kysely;
    const parts: string[] = [];
    for (const table of await k.introspection.getTables({ withInternalKyselyTables: true })) {
      // Every table, whatever its name: the cast only satisfies the typed query builder.
      parts.push(
        JSON.stringify(
          await k
            .selectFrom(table.name as 'users')
            .selectAll()
            .execute(),
        ),
      );
    }
    expect(parts.length).toBeGreaterThanOrEqual(10);
    return Buffer.from(parts.join('\n'));
  }

  it('never lets a secret out: not in any response, the database, the logs or the audit trail', async () => {
    const responses: Response[] = [];
    const send = async (req: Promise<Response>) => {
      const res = await req;
      responses.push(res);
      return res;
    };
    const admin = bearer(h.admin.token);
    const ids: string[] = [];
    const names: string[] = [];
    const all = bodies(CANARY);
    // The key material is a secret too: one of its base64 lines serves as a second canary.
    const keyLine = all.ssh_key.inputs.private_key.split('\n')[2]!;
    for (const body of Object.values(all)) {
      const name = credName('canary');
      const res = await send(
        h.http
          .post('/v1/credentials')
          .set(admin)
          .send({ name, ...body }),
      );
      expect(res.status).toBe(201);
      ids.push(res.body.id);
      names.push(name);
    }
    // Refusals of secrets, too: a wrong passphrase carrying the canary, and an unknown input carrying it.
    expectProblem(
      await send(
        h.http
          .post('/v1/credentials')
          .set(admin)
          .send({ name: credName(), type: 'ssh_key', inputs: { private_key: RSA_LOCKED, passphrase: CANARY } }),
      ),
      400,
    );
    expectProblem(
      await send(
        h.http
          .post('/v1/credentials')
          .set(admin)
          .send({ name: credName(), type: 'token', inputs: { token: 't', [CANARY.toLowerCase()]: CANARY } }),
      ),
      400,
    );
    for (const [i, id] of ids.entries()) {
      await send(h.http.get(`/v1/credentials/${id}`).set(admin));
      const updated = await send(
        h.http
          .put(`/v1/credentials/${id}`)
          .set(admin)
          .send({ description: `rotated ${i}` }),
      );
      expect(updated.status).toBe(200);
    }
    const token = await send(
      h.http
        .put(`/v1/credentials/${ids[3]}`)
        .set(admin)
        .send({ inputs: { token: `new-${CANARY}` } }),
    );
    expect(token.status).toBe(200);
    await send(h.http.get('/v1/credentials?limit=500').set(admin));
    await send(h.http.get('/credentials').set(admin)); // the legacy edition too

    // (a) responses
    expect(responses.length).toBeGreaterThanOrEqual(17);
    for (const res of responses) for (const secret of [CANARY, keyLine]) expect(res.text).not.toContain(secret);
    // …while the secrets are really there, and the list shows every canary credential.
    expect((await h.services.credentials.reveal(ids[3]!)).inputs).toEqual({ token: `new-${CANARY}` });
    expect(responses.at(-1)!.body.map((c: { name: string }) => c.name)).toEqual(expect.arrayContaining(names));

    // (b) the database: a search that finds the (public) names, and no canary.
    const dump = await databaseDump();
    for (const name of names) expect(dump.includes(name)).toBe(true);
    expect(dump.includes(CANARY)).toBe(false);
    expect(dump.includes(keyLine)).toBe(false);

    // (c) the logs: one line per request, none with the canary.
    const logText = Buffer.concat(logs).toString('utf8');
    expect(logText).toContain('"/v1/credentials"');
    for (const secret of [CANARY, keyLine]) expect(logText).not.toContain(secret);

    // (d) the audit trail
    const audit = await h.http.get('/v1/audit?limit=500').set(admin);
    expect(audit.status).toBe(200);
    expect(audit.body.filter((e: { action: string }) => e.action.startsWith('credential.'))).toHaveLength(
      ids.length * 2 + 1,
    );
    for (const secret of [CANARY, keyLine]) expect(audit.text).not.toContain(secret);
  });

  it('re-encrypts credential secrets under a new master key (baton key rotate), which alone then opens them', async () => {
    const res = await h.http
      .post('/v1/credentials')
      .set(bearer(h.admin.token))
      .send({ name: credName('rotate'), type: 'token', inputs: { token: `rot-${CANARY}` } });
    expect(res.status).toBe(201);
    const id = res.body.id as string;
    const before = (await h.tdb.db.repos.credentials.findById(id))!.secret_inputs_enc;
    expect(before.split('.')[1]).toBe(h.keyring.current.kid);

    const newKey = generateMasterKey();
    const changed = await resealAllSecrets({
      transaction: h.tdb.db.transaction,
      ring: new Keyring(newKey, [h.keyring.current]),
      clock: systemClock,
      actor: 'system',
    });
    expect(changed).toBeGreaterThanOrEqual(1);
    const after = (await h.tdb.db.repos.credentials.findById(id))!.secret_inputs_enc;
    expect(after).not.toBe(before);
    expect(after.split('.')[1]).toBe(newKey.kid);
    expect(after).not.toContain(CANARY);

    const serviceWith = (keyring: Keyring) =>
      createCredentialService({
        credentials: h.tdb.db.repos.credentials,
        transaction: h.tdb.db.transaction,
        authz: h.services.authz,
        keyring,
        clock: systemClock,
        usedBy: async () => [],
      });
    expect((await serviceWith(new Keyring(newKey)).reveal(id)).inputs).toEqual({ token: `rot-${CANARY}` });
    await expect(serviceWith(new Keyring(h.keyring.current)).reveal(id)).rejects.toThrow(/does not hold/);
  });
});
