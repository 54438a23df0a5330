// Test support: real git repositories in temp directories, and a real sshd on loopback that serves them.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const GIT_IDENTITY = ['-c', 'user.name=Baton Test', '-c', 'user.email=test@baton.invalid'];

/** A repository with one commit on `main`; `commit()` adds another and returns its id. */
export function createRepo(parent: string, name = 'repo') {
  const dir = path.join(parent, name);
  fs.mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', [...GIT_IDENTITY, ...args], { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  let n = 0;
  const commit = (branch = 'main') => {
    if (git('branch', '--show-current') !== branch) git('checkout', '-q', '-B', branch);
    fs.writeFileSync(path.join(dir, 'site.yml'), `# revision ${++n}\n- hosts: all\n  tasks: []\n`);
    git('add', 'site.yml');
    git('commit', '-q', '-m', `revision ${n}`);
    return git('rev-parse', 'HEAD');
  };
  commit();
  /** Writes these files (paths relative to the repository, directories made) and commits them; returns the commit. */
  const commitFiles = (files: Record<string, string>, message = 'add files') => {
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), text);
    }
    git('add', '.');
    git('commit', '-q', '-m', message);
    return git('rev-parse', 'HEAD');
  };
  return { dir, url: `file://${dir}`, git, commit, commitFiles, head: (branch = 'main') => git('rev-parse', branch) };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Generates an ed25519 key pair; returns the private key text and the public key line. */
export function sshKeyPair(dir: string, name: string, passphrase = ''): { privateKey: string; publicKey: string } {
  const file = path.join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', name, '-f', file]);
  return { privateKey: fs.readFileSync(file, 'utf8'), publicKey: fs.readFileSync(`${file}.pub`, 'utf8').trim() };
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`sshd exited: ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`sshd did not listen on ${port}: ${log()}`);
}

/** A real sshd on 127.0.0.1 (needs root) that lets in exactly the given public keys as root. */
export async function startSshd(
  dir: string,
  authorizedKeys: string[],
): Promise<{ port: number; stop(): Promise<void> }> {
  fs.mkdirSync('/run/sshd', { recursive: true });
  const hostKey = path.join(dir, 'host_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  const authorized = path.join(dir, 'authorized_keys');
  fs.writeFileSync(authorized, `${authorizedKeys.join('\n')}\n`, { mode: 0o600 });
  const port = await freePort();
  const args = [
    '-D',
    '-e',
    '-f',
    '/dev/null',
    '-p',
    String(port),
    '-h',
    hostKey,
    '-o',
    'ListenAddress=127.0.0.1',
    '-o',
    'UsePAM=no',
    '-o',
    'StrictModes=no',
    '-o',
    `AuthorizedKeysFile=${authorized}`,
    '-o',
    `PidFile=${path.join(dir, 'sshd.pid')}`,
    '-o',
    'PermitRootLogin=prohibit-password',
    '-o',
    'PasswordAuthentication=no',
    '-o',
    'KbdInteractiveAuthentication=no',
  ];
  const sshd = spawn('/usr/sbin/sshd', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  sshd.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  try {
    await waitForPort(port, sshd, () => stderr);
  } catch (err) {
    sshd.kill('SIGKILL');
    throw err;
  }
  return {
    port,
    async stop() {
      if (sshd.exitCode !== null || sshd.signalCode !== null) return;
      const closed = new Promise((r) => sshd.once('close', r));
      sshd.kill('SIGTERM');
      await closed;
    },
  };
}

export const tempDir = (stem: string) => fs.mkdtempSync(path.join(os.tmpdir(), `${stem}-`));

export {
  selfSignedCertificate,
  startHttpsServer,
  type CertificateFiles,
  type HttpsRoute,
  type TestHttpsServer,
} from './https-server.js';
export { expectGitError, gitFirstOnPath, ownTmpdirForGitOperations } from './git-checks.js';
export { inlineBundle, LOCAL_INVENTORY, play, runCollecting, succeededOutcome } from './playbook-runs.js';
export * from './galaxy-repos.js';
