// A real `become`: a throw-away Unix user whose sudo REQUIRES its password, reached over a real sshd with the
// run's key; the become_password credential travels only through the run's FIFO (--become-password-file).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { BundleCredential, RunBundle, RunEvent } from '@baton/contracts';
import { sshKeyPair, startSshd, tempDir } from '../testing/index.js';
import { runPlaybook } from './run-playbook.js';

const user = `baton-become-${process.pid}`;
const password = `become-pw-${process.pid}-x7Q`;
const sudoers = `/etc/sudoers.d/${user}`;
const dir = tempDir('baton-become-test');
const sshDir = tempDir('baton-become-sshd');
let sshd: { port: number; stop(): Promise<void> };
let key: { privateKey: string; publicKey: string };

const commandExists = (cmd: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  if (!commandExists('sudo'))
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'sudo'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  execFileSync('useradd', ['--create-home', '--shell', '/bin/sh', user]);
  execFileSync('chpasswd', { input: `${user}:${password}\n` });
  // ALL with a password (no NOPASSWD), and no cached sudo ticket between runs: every become must send it.
  const entry = `Defaults:${user} timestamp_timeout=0\n${user} ALL=(ALL:ALL) ALL\n`;
  fs.writeFileSync(sudoers, entry, { mode: 0o440 });
  execFileSync('visudo', ['-cf', sudoers]);
  key = sshKeyPair(sshDir, 'become_key');
  sshd = await startSshd(sshDir, [key.publicKey]);
  // sshd reads authorized_keys as the user logging in: it must reach the file (the keys in it are public).
  fs.chmodSync(sshDir, 0o755);
  fs.chmodSync(path.join(sshDir, 'authorized_keys'), 0o644);
});

afterAll(async () => {
  await sshd?.stop();
  fs.rmSync(sudoers, { force: true });
  try {
    execFileSync('userdel', ['--remove', '--force', user], { stdio: 'ignore' });
  } catch {
    // not created
  }
  for (const d of [dir, sshDir]) fs.rmSync(d, { recursive: true, force: true });
});

const PLAYBOOK = `- hosts: all
  gather_facts: false
  tasks:
    - command: whoami
      register: plain
    - command: whoami
      become: true
`;

async function runAs(mode: 'off' | 'bwrap', becomePassword: string | undefined) {
  const credentials: BundleCredential[] = [
    { type: 'ssh_key', inputs: { private_key: key.privateKey, username: user } },
  ];
  if (becomePassword !== undefined) credentials.push({ type: 'become_password', inputs: { password: becomePassword } });
  const bundle: RunBundle = {
    run_id: 'run_become',
    playbook: { source: 'inline', content: PLAYBOOK },
    inventory: {
      content: `target ansible_host=127.0.0.1 ansible_port=${sshd.port} ansible_connection=ssh ansible_python_interpreter=/usr/bin/python3\n`,
      format: 'ini',
    },
    check: false,
    credentials,
  };
  const events: RunEvent[] = [];
  const outcome = await runPlaybook(bundle, {
    workRoot: dir,
    sandbox: { mode, hidden: [] },
    onEvent: (e) => events.push(e),
  });
  const results = events.filter((e) => e.kind.startsWith('runner_on_'));
  expect(fs.readdirSync(dir)).toEqual([]); // the run directory (FIFO, agent socket) is gone
  return { outcome, events, results };
}

describe.each(['off', 'bwrap'] as const)('become with a password over ssh (sandbox %s)', (mode) => {
  it('becomes root with the password served through the FIFO', async () => {
    const { outcome, events, results } = await runAs(mode, password);
    expect(outcome.conclusion).toBe('succeeded');
    expect(results.map((e) => [e.kind, (e.data.res as { stdout?: string }).stdout])).toEqual([
      ['runner_on_ok', user],
      ['runner_on_ok', 'root'],
    ]);
    expect(JSON.stringify(events)).not.toContain(password);
  });

  it('fails the run with a wrong password', async () => {
    const { outcome, results } = await runAs(mode, 'not-the-password');
    expect(outcome.conclusion).toBe('failed');
    expect(outcome.stats.target).toMatchObject({ ok: 1, failed: 1 });
    expect(results.at(-1)!.kind).toBe('runner_on_failed');
    expect(JSON.stringify(results.at(-1)!.data.res)).toMatch(/incorrect sudo password/i);
  });

  it('fails without a password: sudo really asks for one', async () => {
    const { outcome, results } = await runAs(mode, undefined);
    expect(outcome.conclusion).toBe('failed');
    expect(results.at(-1)!.kind).toBe('runner_on_failed');
    expect(JSON.stringify(results.at(-1)!.data.res)).toMatch(/password is required|missing sudo password/i);
  });
});
