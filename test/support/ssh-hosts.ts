// Real SSH test hosts for end-to-end runs: one network namespace per host, each with its own sshd and host key,
// wired by veth pairs into a bridge on this machine (needs root; see ARCHITECTURE.md "Executing ansible-playbook").
// Everything a call creates is named `bsh<run id>…`, so teardown can find it again even after a half-way failure.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Every namespace, bridge and veth this module creates starts with this (plus a per-call run id). */
export const SSH_HOSTS_NAME_STEM = 'bsh';
/** Only /24s inside this /16 are ever used, so the hosts can never shadow a real network. */
const OWN_NETWORK = '10.123.';
/** Subnet claims live here as `<third octet>.lock` files holding `<pid> <resource prefix>`. */
const LOCK_DIR = '/run/baton-ssh-hosts';
/** .1 is the bridge, .255 broadcast: .2 … .254 are left for hosts. */
const MAX_HOSTS = 253;

export interface SshHost {
  name: string;
  address: string;
  port: 22;
  /** The host's network namespace, e.g. for `ip netns exec` (to make it unreachable in a test). */
  namespace: string;
}

export interface SshHosts {
  hosts: SshHost[];
  /** One ed25519 key authorized for root on every host (the material for an ssh_key credential). */
  clientKey: { privateKey: string; publicKey: string };
  /** The /24 in use, e.g. `10.123.57.0/24`; the bridge on this machine holds its .1. */
  subnet: string;
  /** Prefix of every namespace, bridge and veth of this call (`bsh` + 6 hex digits). */
  resourcePrefix: string;
  /** An INI inventory of all hosts (or of `names`, in that order) as root with /usr/bin/python3. */
  inventory(opts?: { names?: string[] }): string;
  /** The host's current public host key as a known_hosts line (`<address> ssh-ed25519 <key>`). */
  knownHostsLine(name: string): string;
  /** Gives the host a new host key: its sshd is restarted with a freshly generated one (a reinstalled machine). */
  replaceHostKey(name: string): Promise<void>;
  /** Kills every process in the namespaces, drops host-side sockets to the subnet, deletes links and namespaces. */
  stop(): Promise<void>;
}

export interface StartSshHostsOptions {
  count: number;
  /** A /24 inside 10.123.0.0/16. Default: a free one picked at random (so parallel Jest workers do not collide). */
  subnet?: string;
  /** Host names are `<namePrefix><n>`, n zero-padded to the width of `count` so that names sort like numbers. */
  namePrefix?: string;
  /** Test hook: the sshd of this host name gets an invalid option, so start fails after the network exists. */
  breakSshdOf?: string;
}

const ip = (args: string[], input?: string) => runAsync('ip', args, input);

async function runAsync(cmd: string, args: string[], input?: string): Promise<string> {
  const child = execFileAsync(cmd, args, { encoding: 'utf8' });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  try {
    return (await child).stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`);
  }
}

/** Runs a command for teardown, where one failure must not stop the rest. */
function tryRun(cmd: string, args: string[], input?: string): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}

function parseSubnet(subnet: string): number {
  const m = /^10\.123\.(\d{1,3})\.0\/24$/.exec(subnet);
  const octet = m ? Number(m[1]) : NaN;
  if (!(octet >= 0 && octet <= 255)) throw new Error(`subnet must be a /24 inside 10.123.0.0/16 (got ${subnet})`);
  return octet;
}

const pidAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM means it exists but belongs to someone else: still alive.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Removes everything named with `prefix`: processes in its namespaces first (sshd and its sessions, whose sockets
 * would keep a deleted namespace alive), then host-side sockets to the subnet (ControlPersist masters would otherwise
 * linger until their timeout), then veths and the bridge, then the namespaces. Synchronous so it also works on exit.
 */
function destroyResources(prefix: string, octet: number): void {
  const namespaces = tryRun('ip', ['netns', 'list'])
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((ns) => ns.startsWith(prefix));
  for (const ns of namespaces) {
    for (const pid of tryRun('ip', ['netns', 'pids', ns]).split(/\s+/).filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
  tryRun('ss', ['-K', 'dst', `${OWN_NETWORK}${octet}.0/24`]);
  const links = tryRun('ip', ['-o', 'link', 'show'])
    .split('\n')
    .map((line) => /^\d+:\s+([^:@\s]+)/.exec(line)?.[1] ?? '')
    .filter((name) => name.startsWith(prefix));
  // Deleting one end of a veth deletes its peer inside the namespace too. -force: go on past a vanished link.
  if (links.length > 0) tryRun('ip', ['-force', '-batch', '-'], links.map((l) => `link del ${l}\n`).join(''));
  if (namespaces.length > 0)
    tryRun('ip', ['-force', '-batch', '-'], namespaces.map((ns) => `netns del ${ns}\n`).join(''));
}

const lockFile = (octet: number) => path.join(LOCK_DIR, `${octet}.lock`);

/**
 * Claims a /24 with an O_EXCL lock file. A lock whose pid is dead belongs to a crashed worker: its leftovers are
 * removed and the subnet is taken over. (Two workers reclaiming the same stale lock at the same instant could both
 * win; with random picks among 256 subnets that is accepted.)
 */
function claimSubnet(octet: number, prefix: string): boolean {
  const file = lockFile(octet);
  const inUse = tryRun('ip', ['-4', '-o', 'addr', 'show']).includes(` ${OWN_NETWORK}${octet}.`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid} ${prefix}\n`, { flag: 'wx' });
      if (!inUse) return true;
      // Someone outside this module holds addresses here: leave the subnet alone.
      fs.rmSync(file, { force: true });
      return false;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const [pid, stalePrefix] = fs.readFileSync(file, 'utf8').trim().split(' ');
    if (!pid || pidAlive(Number(pid))) return false;
    if (stalePrefix?.startsWith(SSH_HOSTS_NAME_STEM)) destroyResources(stalePrefix, octet);
    fs.rmSync(file, { force: true });
  }
  return false;
}

function releaseSubnet(octet: number, prefix: string): void {
  const file = lockFile(octet);
  try {
    if (fs.readFileSync(file, 'utf8').trim() === `${process.pid} ${prefix}`) fs.rmSync(file);
  } catch {
    // Never claimed, or already released.
  }
}

function pickSubnet(requested: string | undefined, prefix: string): number {
  fs.mkdirSync(LOCK_DIR, { recursive: true });
  if (requested !== undefined) {
    const octet = parseSubnet(requested);
    if (!claimSubnet(octet, prefix)) throw new Error(`subnet ${requested} is in use`);
    return octet;
  }
  // Random order so that parallel workers rarely even contend for the same lock.
  const octets = Array.from({ length: 256 }, (_, i) => i).sort(() => Math.random() - 0.5);
  for (const octet of octets) if (claimSubnet(octet, prefix)) return octet;
  throw new Error('no free /24 left in 10.123.0.0/16');
}

/** Resources of calls that were never stopped, torn down when the process (a Jest worker) exits. */
const live = new Map<string, () => void>();
let exitHookInstalled = false;
function registerLive(prefix: string, destroy: () => void): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const d of live.values()) d();
    });
  }
  live.set(prefix, destroy);
}

async function waitForSsh(address: string, sshd: ChildProcess, log: () => string, signal: AbortSignal): Promise<void> {
  // Connecting from this machine's namespace also proves the bridge → veth → namespace path works.
  for (let attempt = 0; attempt < 200; attempt++) {
    // Another host failed: stop probing, the network is being torn down under us.
    if (signal.aborted) throw new Error(`start of ${address} abandoned`);
    if (sshd.exitCode !== null || sshd.signalCode !== null) throw new Error(`sshd on ${address} exited: ${log()}`);
    const banner = await new Promise<boolean>((resolve) => {
      const s = net.connect(22, address);
      // A SYN into a deleted veth is never answered; without this the socket would keep the process alive.
      const abandon = () => {
        s.destroy();
        resolve(false);
      };
      signal.addEventListener('abort', abandon, { once: true });
      s.setTimeout(2000, abandon);
      s.once('data', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
      s.once('close', () => {
        signal.removeEventListener('abort', abandon);
        resolve(false);
      });
    });
    if (banner) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`sshd on ${address} did not answer: ${log()}`);
}

export async function startSshHosts(options: StartSshHostsOptions): Promise<SshHosts> {
  const { count, namePrefix = 'host' } = options;
  if (!Number.isInteger(count) || count < 1 || count > MAX_HOSTS) throw new Error(`count must be 1…${MAX_HOSTS}`);
  // Names end up in namespace names and inventory lines: keep them to characters both accept.
  if (!/^[a-z][a-z0-9-]*$/i.test(namePrefix)) throw new Error(`invalid namePrefix ${namePrefix}`);

  const prefix = `${SSH_HOSTS_NAME_STEM}${crypto.randomBytes(3).toString('hex')}`;
  const octet = pickSubnet(options.subnet, prefix);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `baton-ssh-hosts-${prefix}-`));
  const sshds: ChildProcess[] = [];
  let destroyed = false;
  const destroy = () => {
    if (destroyed) return;
    destroyed = true;
    for (const sshd of sshds) sshd.kill('SIGKILL');
    destroyResources(prefix, octet);
    fs.rmSync(dir, { recursive: true, force: true });
    releaseSubnet(octet, prefix);
    live.delete(prefix);
  };
  registerLive(prefix, destroy);
  const probes = new AbortController();
  const stop = async () => {
    probes.abort();
    const exited = sshds
      .filter((c) => c.exitCode === null && c.signalCode === null)
      .map((c) => new Promise((r) => c.once('close', r)));
    destroy();
    // Reaped, not just signalled: afterwards no sshd of this call exists, not even as a zombie.
    await Promise.all(exited);
  };

  const width = String(count).length;
  const hosts: SshHost[] = Array.from({ length: count }, (_, i) => {
    const name = `${namePrefix}${String(i + 1).padStart(width, '0')}`;
    return { name, address: `${OWN_NETWORK}${octet}.${i + 2}`, port: 22 as const, namespace: `${prefix}-${name}` };
  });

  try {
    fs.mkdirSync('/run/sshd', { recursive: true }); // sshd's privilege separation directory
    const clientKeyFile = path.join(dir, 'client_ed25519');
    const hostKeyFile = (i: number) => path.join(dir, `host${i}_ed25519`);
    // Key generation does not depend on the network: run it alongside the namespace setup.
    const keys = Promise.all([
      runAsync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `${prefix}-client`, '-f', clientKeyFile]),
      ...hosts.map((_, i) =>
        runAsync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `${prefix}-host${i}`, '-f', hostKeyFile(i)]),
      ),
    ]);
    // One `ip -batch` creates all namespaces and links: `ip netns add` run in parallel can race on the /run/netns
    // mount, and one process is faster than hundreds anyway. Each veth's peer is born inside its namespace as eth0.
    const bridge = `${prefix}br`;
    const hostSide = [
      `link add ${bridge} type bridge`,
      `addr add ${OWN_NETWORK}${octet}.1/24 dev ${bridge}`,
      `link set ${bridge} up`,
      ...hosts.flatMap((h, i) => [
        `netns add ${h.namespace}`,
        `link add ${prefix}v${i} type veth peer name eth0 netns ${h.namespace}`,
        `link set ${prefix}v${i} master ${bridge} up`,
      ]),
    ];
    await ip(['-batch', '-'], `${hostSide.join('\n')}\n`);
    // Inside each namespace (independent of each other, so in parallel); lo up because ansible and sshd use it.
    const insideSetup = Promise.all(
      hosts.map((h) =>
        ip(['-n', h.namespace, '-batch', '-'], `link set lo up\naddr add ${h.address}/24 dev eth0\nlink set eth0 up\n`),
      ),
    );
    await Promise.all([keys, insideSetup]);

    const clientKey = {
      privateKey: fs.readFileSync(clientKeyFile, 'utf8'),
      publicKey: fs.readFileSync(`${clientKeyFile}.pub`, 'utf8').trim(),
    };
    const authorized = path.join(dir, 'authorized_keys');
    fs.writeFileSync(authorized, `${clientKey.publicKey}\n`, { mode: 0o600 });

    const startSshd = (h: SshHost, i: number): Promise<void> => {
      const args = [
        'netns',
        'exec',
        h.namespace, // `ip netns exec` execs sshd itself, so the child's pid is sshd's
        '/usr/sbin/sshd',
        '-D',
        '-e',
        '-f',
        '/dev/null',
        '-h',
        hostKeyFile(i),
        '-o',
        `ListenAddress=${h.address}:22`,
        '-o',
        'UsePAM=no',
        '-o',
        'StrictModes=no',
        '-o',
        `AuthorizedKeysFile=${authorized}`,
        '-o',
        `PidFile=${path.join(dir, `${h.name}.pid`)}`,
        '-o',
        'PermitRootLogin=prohibit-password',
        '-o',
        'PasswordAuthentication=no',
        '-o',
        'KbdInteractiveAuthentication=no',
        // ansible copies files over SFTP; an empty config has no sftp subsystem.
        '-o',
        'Subsystem=sftp internal-sftp',
        // Many forks of one run connect at once: don't let sshd's default MaxStartups drop them.
        '-o',
        'MaxStartups=200',
        '-o',
        'MaxSessions=50',
        ...(options.breakSshdOf === h.name ? ['-o', 'NoSuchOptionInjectedByTest=yes'] : []),
      ];
      const sshd = spawn('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
      sshds[i] = sshd;
      let stderr = '';
      sshd.stderr?.on('data', (c: Buffer) => {
        if (stderr.length < 8192) stderr += c.toString('utf8');
      });
      return waitForSsh(h.address, sshd, () => stderr, probes.signal);
    };
    await Promise.all(hosts.map((h, i) => startSshd(h, i)));
    const indexOf = (name: string): number => {
      const i = hosts.findIndex((h) => h.name === name);
      if (i < 0) throw new Error(`unknown host ${name}`);
      return i;
    };

    return {
      hosts,
      clientKey,
      subnet: `${OWN_NETWORK}${octet}.0/24`,
      resourcePrefix: prefix,
      inventory(opts = {}) {
        const byName = new Map(hosts.map((h) => [h.name, h]));
        const chosen = (opts.names ?? hosts.map((h) => h.name)).map((n) => {
          const h = byName.get(n);
          if (!h) throw new Error(`unknown host ${n}`);
          return h;
        });
        return chosen
          .map(
            (h) =>
              `${h.name} ansible_host=${h.address} ansible_user=root ansible_python_interpreter=/usr/bin/python3\n`,
          )
          .join('');
      },
      knownHostsLine(name) {
        const i = indexOf(name);
        const [type, key] = fs
          .readFileSync(`${hostKeyFile(i)}.pub`, 'utf8')
          .trim()
          .split(/\s+/);
        return `${hosts[i]!.address} ${type} ${key}`;
      },
      async replaceHostKey(name) {
        const i = indexOf(name);
        const old = sshds[i]!;
        const exited = new Promise((r) => old.once('close', r));
        old.kill('SIGKILL');
        await exited;
        for (const f of [hostKeyFile(i), `${hostKeyFile(i)}.pub`]) fs.rmSync(f, { force: true });
        await runAsync('ssh-keygen', [
          '-q',
          '-t',
          'ed25519',
          '-N',
          '',
          '-C',
          `${prefix}-host${i}-new`,
          '-f',
          hostKeyFile(i),
        ]);
        await startSshd(hosts[i]!, i);
      },
      stop,
    };
  } catch (err) {
    await stop();
    // The prefix lets a caller (and the reader of a CI log) check that nothing named with it is left.
    throw new Error(`startSshHosts ${prefix} failed and was cleaned up: ${(err as Error).message}`, { cause: err });
  }
}

/** What `ssh-keygen -l` says of a known_hosts line: the real tool's fingerprint, to compare Baton's with. */
export function sshKeygenFingerprint(line: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-fp-'));
  try {
    const file = path.join(dir, 'key.pub');
    fs.writeFileSync(file, `${line.split(' ').slice(1).join(' ')}\n`);
    return execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', file], { encoding: 'utf8' }).split(' ')[1]!;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
