import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseInventory, runInventorySource } from '../inventory/ansible-inventory.js';
import { runCapped } from '../process/capped-process.js';
import { tempDir } from '../testing/index.js';
import { probeBwrap, resolveSandboxMode, sandboxed, type SandboxSpec } from './sandbox.js';

const root = tempDir('baton-sandbox-test');
const hiddenDir = path.join(root, 'data');
const hiddenFile = path.join(root, 'master.key');
const workDir = path.join(root, 'work');
const SECRET = `sandbox-canary-${process.pid}`;
const ENV = { PATH: process.env.PATH, LANG: 'C.UTF-8' };

beforeAll(async () => {
  fs.mkdirSync(hiddenDir);
  fs.writeFileSync(path.join(hiddenDir, 'baton.db'), SECRET);
  fs.writeFileSync(hiddenFile, SECRET);
  fs.mkdirSync(workDir);
  // These tests are about the real bwrap: without it they must fail, not pass vacuously.
  expect(await probeBwrap()).toEqual({ available: true });
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const spec = (extra: Partial<SandboxSpec> = {}): SandboxSpec => ({
  mode: 'bwrap',
  hidden: [hiddenDir, hiddenFile],
  writable: [workDir],
  ...extra,
});

/** Runs a shell script in the sandbox; returns its exit code and output. */
function shell(script: string, s: SandboxSpec = spec()) {
  const cmd = sandboxed('/bin/sh', ['-c', script], s);
  try {
    return {
      code: 0,
      out: execFileSync(cmd.command, cmd.args, {
        cwd: workDir,
        env: ENV,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    };
  } catch (err) {
    const e = err as { status: number; stdout: string; stderr: string };
    return { code: e.status, out: e.stdout + e.stderr };
  }
}

describe('sandboxed', () => {
  it('returns the command unchanged when off', () => {
    expect(sandboxed('ansible-playbook', ['-i', 'x'], { mode: 'off', hidden: [hiddenDir], writable: [] })).toEqual({
      command: 'ansible-playbook',
      args: ['-i', 'x'],
    });
  });

  it('hides directories and files, and the host outside reads as-is', () => {
    expect(fs.readFileSync(path.join(hiddenDir, 'baton.db'), 'utf8')).toBe(SECRET); // there outside
    const r = shell(
      `echo "[$(ls -A ${hiddenDir})]"; cat ${hiddenFile} 2>&1; cat ${hiddenDir}/baton.db 2>&1; head -c 4 /etc/os-release`,
    );
    expect(r.out).not.toContain(SECRET);
    expect(r.out).toMatch(/^\[\]\n/); // an empty directory
    expect(r.out).toContain(`${hiddenFile}: Permission denied`);
    expect(r.out).toContain(`${hiddenDir}/baton.db: No such file`);
    expect(r.out).toMatch(/PRET|NAME/); // the rest of the filesystem is readable
  });

  it('shows only its own processes in /proc, never the parent process and its environment', () => {
    const r = shell(`ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' '; cat /proc/${process.pid}/environ`);
    const pids = r.out
      .trim()
      .split(/\s+/)
      .filter((x) => /^\d+$/.test(x))
      .map(Number);
    expect(pids.length).toBeGreaterThan(0);
    expect(pids.length).toBeLessThan(8); // bwrap's init, the shell, ls, grep, tr — not the host's processes
    expect(pids).not.toContain(process.pid);
    expect(r.out).toContain(`/proc/${process.pid}/environ: No such file`);
    const hostPids = fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x));
    expect(hostPids.length).toBeGreaterThan(pids.length);
  });

  it('writes only its writable directories; as root it cannot unmount or remount its way out', () => {
    const r = shell(
      `echo hi > ${workDir}/out && echo wrote; touch /etc/baton-sandbox-test 2>&1; umount ${hiddenDir} 2>&1; mount -o remount,rw / 2>&1; cat ${hiddenDir}/baton.db 2>&1`,
    );
    expect(r.out).toContain('wrote');
    expect(fs.readFileSync(path.join(workDir, 'out'), 'utf8')).toBe('hi\n');
    expect(r.out).toContain('Read-only file system');
    expect(fs.existsSync('/etc/baton-sandbox-test')).toBe(false);
    expect(r.out).not.toContain(SECRET);
  });

  it('keeps a readable or writable path inside a hidden one visible', () => {
    const inner = path.join(hiddenDir, 'checkout');
    fs.mkdirSync(inner);
    fs.writeFileSync(path.join(inner, 'inventory.sh'), 'visible');
    try {
      const r = shell(`cat ${inner}/inventory.sh; echo; cat ${hiddenDir}/baton.db`, spec({ readable: [inner] }));
      expect(r.out).toContain('visible');
      expect(r.out).not.toContain(SECRET);
    } finally {
      fs.rmSync(inner, { recursive: true });
    }
  });

  it('passes its exit code through, and refuses a writable path that does not exist', () => {
    expect(shell('exit 4').code).toBe(4);
    expect(() => sandboxed('true', [], spec({ writable: [path.join(root, 'missing')] }))).toThrow(/does not exist/);
    expect(() => sandboxed('true', [], spec({ hidden: ['/'] }))).toThrow(/root directory/);
  });

  it('lets SIGINT and SIGTERM to the process group reach the command, which stops on its own', async () => {
    const waitFor = (child: ChildProcess, text: string, out: { text: string }) =>
      new Promise<void>((resolve) =>
        child.stdout!.on('data', (c: Buffer) => (out.text += c.toString()).includes(text) && resolve()),
      );
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const cmd = sandboxed(
        '/bin/sh',
        ['-c', `trap 'echo got-${signal}; exit 7' INT TERM; echo ready; while :; do sleep 0.1; done`],
        spec(),
      );
      const child = spawn(cmd.command, cmd.args, {
        cwd: workDir,
        env: ENV,
        detached: true,
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const out = { text: '' };
      await waitFor(child, 'ready', out);
      const closed = new Promise<[number | null, string | null]>((resolve) =>
        child.once('close', (code, sig) => resolve([code, sig])),
      );
      process.kill(-child.pid!, signal);
      // bwrap itself survived the signal and passed on the command's own exit code
      expect(await closed).toEqual([7, null]);
      expect(out.text).toContain(`got-${signal}`);
    }
  });
});

describe('resolveSandboxMode', () => {
  it('is bwrap for auto and bwrap where bwrap works, off for off', async () => {
    expect(await resolveSandboxMode('auto')).toBe('bwrap');
    expect(await resolveSandboxMode('bwrap')).toBe('bwrap');
    expect(await resolveSandboxMode('off')).toBe('off');
  });

  it('where bwrap does not work: auto is off, bwrap refuses with the probe error', async () => {
    const broken = () => probeBwrap(path.join(root, 'no-such-bwrap'));
    expect(await broken()).toEqual({ available: false, error: expect.stringContaining('ENOENT') });
    expect(await resolveSandboxMode('auto', broken)).toBe('off');
    await expect(resolveSandboxMode('bwrap', broken)).rejects.toThrow(
      /BATON_SANDBOX=bwrap, but bubblewrap does not work on this host: .*ENOENT/,
    );
    expect(await resolveSandboxMode('off', broken)).toBe('off');
  });
});

describe('runCapped and the inventory runners in the sandbox', () => {
  it('runCapped hides what it is told to and kills the sandbox past its output cap', async () => {
    const sandbox = { mode: 'bwrap' as const, hidden: [hiddenDir] };
    const r = await runCapped('/bin/sh', ['-c', `cat ${hiddenDir}/baton.db; ls /proc | grep -cE '^[0-9]+$'`], {
      cwd: workDir,
      env: ENV,
      timeoutMs: 10_000,
      maxOutputBytes: 1024,
      sandbox,
    });
    expect(r.stdout).not.toContain(SECRET);
    expect(Number(r.stdout.trim())).toBeLessThan(8);
    const flood = await runCapped('/bin/sh', ['-c', 'yes'], {
      cwd: workDir,
      env: ENV,
      timeoutMs: 10_000,
      maxOutputBytes: 1024,
      sandbox,
    });
    expect(flood.killedFor).toBe('output-too-large');
  });

  it('an inventory script cannot read a hidden directory, nor another private directory beside its own', async () => {
    const checkout = fs.mkdtempSync(path.join(root, 'baton-source-'));
    const script = path.join(checkout, 'inventory.sh');
    // It reports what it could read as a host variable.
    fs.writeFileSync(
      script,
      `#!/bin/sh\nread=$(cat ${hiddenDir}/baton.db ${hiddenFile} 2>/dev/null)\nprintf '{"web": {"hosts": ["w1"]}, "_meta": {"hostvars": {"w1": {"read": "%s", "tmp": "%s"}}}}' "$read" "$(ls "$(dirname "$PWD")" | tr '\\n' ' ')"\n`,
      { mode: 0o755 },
    );
    try {
      const off = await runInventorySource({
        source: script,
        cwd: checkout,
        enablePlugins: ['script'],
        timeoutMs: 30_000,
        maxOutputBytes: 1 << 20,
      });
      expect(JSON.stringify(off.list)).toContain(SECRET); // without the sandbox it can
      const on = await runInventorySource({
        source: script,
        cwd: checkout,
        enablePlugins: ['script'],
        timeoutMs: 30_000,
        maxOutputBytes: 1 << 20,
        sandbox: { mode: 'bwrap', hidden: [hiddenDir, hiddenFile] },
      });
      expect(on.hosts).toEqual([{ name: 'w1', groups: ['web'] }]);
      const vars = (on.list._meta as { hostvars: Record<string, { read: string; tmp: string }> }).hostvars.w1!;
      expect(vars.read).toBe('');
      expect(vars.tmp.trim()).toBe(path.basename(checkout)); // siblings (data, work, master.key) are not visible
    } finally {
      fs.rmSync(checkout, { recursive: true, force: true });
    }
  });

  it('parseInventory works in the sandbox', async () => {
    const parsed = await parseInventory({
      content: '[web]\nw1\nw2\n',
      sandbox: { mode: 'bwrap', hidden: [hiddenDir] },
    });
    expect(parsed.hosts.map((h) => h.name)).toEqual(['w1', 'w2']);
  });
});
