// The SSH test hosts are real: ansible reaches them over the bridge, and stop() leaves nothing behind.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type SshHosts, startSshHosts } from './ssh-hosts.js';

const execFileAsync = promisify(execFile);

const namespacesNamed = (prefix: string) =>
  execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((ns) => ns.startsWith(prefix));

const linksNamed = (prefix: string) =>
  execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => /^\d+:\s+([^:@\s]+)/.exec(l)?.[1] ?? '')
    .filter((name) => name.startsWith(prefix));

/** Live processes whose command line (or, for ssh mux masters, process title) mentions `needle`. */
function processesMentioning(needle: string): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)) {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmdline.includes(needle)) found.push(`${pid}: ${cmdline}`);
    } catch {
      // Exited while we looked.
    }
  }
  return found;
}

/** Polls until `probe` returns an empty list, returning the last list (so a failing assertion shows what stayed). */
async function untilEmpty(probe: () => string[], attempts = 100): Promise<string[]> {
  let last = probe();
  for (let i = 0; i < attempts && last.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    last = probe();
  }
  return last;
}

describe('startSshHosts with three hosts', () => {
  let sshHosts: SshHosts;
  let work: string;
  let keyFile: string;
  let controlDir: string;
  let stopped = false;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'ssh-hosts-test-'));
    sshHosts = await startSshHosts({ count: 3 });
    keyFile = path.join(work, 'id_ed25519');
    fs.writeFileSync(keyFile, sshHosts.clientKey.privateKey, { mode: 0o600 });
    controlDir = path.join(work, 'cp');
  });

  afterAll(async () => {
    if (!stopped) await sshHosts?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('names hosts in order with distinct addresses inside the chosen 10.123.X.0/24', () => {
    expect(sshHosts.hosts.map((h) => h.name)).toEqual(['host1', 'host2', 'host3']);
    const base = sshHosts.subnet.replace(/0\/24$/, '');
    expect(sshHosts.subnet).toMatch(/^10\.123\.\d{1,3}\.0\/24$/);
    expect(sshHosts.hosts.map((h) => h.address)).toEqual([`${base}2`, `${base}3`, `${base}4`]);
    expect(sshHosts.hosts.every((h) => h.port === 22)).toBe(true);
  });

  it('answers ansible ping on every host as root with the client key', async () => {
    const inventory = path.join(work, 'hosts.ini');
    fs.writeFileSync(inventory, sshHosts.inventory());
    // ControlPersist stays on (ansible's default) so the stop() test below sees live mux masters.
    const { stdout } = await execFileAsync(
      'ansible',
      ['-i', inventory, 'all', '-m', 'ping', '-o', '--private-key', keyFile, '-u', 'root'],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          ANSIBLE_HOST_KEY_CHECKING: 'False',
          ANSIBLE_SSH_CONTROL_PATH_DIR: controlDir,
          ANSIBLE_PIPELINING: 'True',
        },
      },
    );
    const pongs = stdout
      .split('\n')
      .filter((l) => /\| SUCCESS => .*"ping": "pong"/.test(l))
      .map((l) => l.split(' ')[0])
      .sort();
    expect(pongs).toEqual(['host1', 'host2', 'host3']);
  });

  it('gives every host its own host key', async () => {
    const keys = await Promise.all(
      sshHosts.hosts.map(async (h) => {
        const { stdout } = await execFileAsync('ssh-keyscan', ['-t', 'ed25519', '-p', '22', h.address], {
          encoding: 'utf8',
        });
        return stdout.trim().split(/\s+/)[2];
      }),
    );
    expect(keys.every((k) => typeof k === 'string' && k.length > 0)).toBe(true);
    expect(new Set(keys).size).toBe(3);
  });

  it('writes an inventory of only the named hosts, in the given order', () => {
    const [, second, third] = sshHosts.hosts;
    expect(sshHosts.inventory({ names: ['host3', 'host2'] })).toBe(
      `host3 ansible_host=${third!.address} ansible_user=root ansible_python_interpreter=/usr/bin/python3\n` +
        `host2 ansible_host=${second!.address} ansible_user=root ansible_python_interpreter=/usr/bin/python3\n`,
    );
    expect(() => sshHosts.inventory({ names: ['nohost'] })).toThrow('unknown host nohost');
  });

  it('stop() removes namespaces, links and sshds, and ends the ControlPersist masters left by ansible', async () => {
    const prefix = sshHosts.resourcePrefix;
    // Without masters (from the ping test) there would be nothing to prove about them.
    expect(processesMentioning(controlDir).length).toBeGreaterThan(0);
    expect(processesMentioning(prefix).length).toBe(3);

    stopped = true;
    await sshHosts.stop();

    expect(namespacesNamed(prefix)).toEqual([]);
    expect(linksNamed(prefix)).toEqual([]);
    // The sshd command lines name the call's temp dir, which contains the prefix.
    expect(processesMentioning(prefix)).toEqual([]);
    // Masters exit on their own once their sockets are gone; they are not children we could wait for.
    expect(await untilEmpty(() => processesMentioning(controlDir))).toEqual([]);
    expect(fs.readdirSync(os.tmpdir()).filter((f) => f.includes(prefix))).toEqual([]);
  });
});

describe('startSshHosts failing half-way', () => {
  it('removes the namespaces, links, sshds, temp files and subnet claim it had created', async () => {
    const failure = await startSshHosts({ count: 3, breakSshdOf: 'host2' }).then(
      () => null,
      (err: Error) => err,
    );
    expect(failure).toBeInstanceOf(Error);
    // The failure must come from host2's sshd, i.e. after all namespaces, links and the other sshds existed.
    expect(failure!.message).toMatch(/sshd on 10\.123\.\d+\.3 exited: .*NoSuchOptionInjectedByTest/s);
    const prefix = /startSshHosts (bsh[0-9a-f]{6}) failed/.exec(failure!.message)?.[1];
    expect(prefix).toBeDefined();

    expect(namespacesNamed(prefix!)).toEqual([]);
    expect(linksNamed(prefix!)).toEqual([]);
    expect(processesMentioning(prefix!)).toEqual([]);
    expect(fs.readdirSync(os.tmpdir()).filter((f) => f.includes(prefix!))).toEqual([]);
    const claims = fs
      .readdirSync('/run/baton-ssh-hosts')
      .map((f) => fs.readFileSync(path.join('/run/baton-ssh-hosts', f), 'utf8'));
    expect(claims.filter((c) => c.includes(prefix!))).toEqual([]);
  });
});

describe('startSshHosts in parallel', () => {
  it('gives simultaneous calls disjoint subnets and resource names', async () => {
    const [a, b] = await Promise.all([startSshHosts({ count: 2 }), startSshHosts({ count: 2 })]);
    try {
      expect(a.subnet).not.toBe(b.subnet);
      expect(a.resourcePrefix).not.toBe(b.resourcePrefix);
      // Both sets answer on their own addresses.
      const banners = await Promise.all(
        [...a.hosts, ...b.hosts].map(
          async (h) => (await execFileAsync('ssh-keyscan', ['-t', 'ed25519', h.address], { encoding: 'utf8' })).stdout,
        ),
      );
      expect(banners.every((s) => s.includes('ssh-ed25519'))).toBe(true);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('refuses an explicitly requested subnet that another call holds', async () => {
    const first = await startSshHosts({ count: 1 });
    try {
      await expect(startSshHosts({ count: 1, subnet: first.subnet })).rejects.toThrow(
        `subnet ${first.subnet} is in use`,
      );
    } finally {
      await first.stop();
    }
  });

  it('rejects a subnet outside 10.123.0.0/16 before creating anything', async () => {
    await expect(startSshHosts({ count: 1, subnet: '192.168.1.0/24' })).rejects.toThrow(
      'subnet must be a /24 inside 10.123.0.0/16',
    );
  });
});
