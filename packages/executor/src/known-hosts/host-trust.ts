// ssh host key checking for runs and git: the stored keys become a private known_hosts file, ssh checks against it
// (and only it: no system or user file) by the owner's policy, and what ssh added on first contact is read back so
// the server can keep it. Keys are named as ssh connects (the address or name it was given, `[name]:port` off 22).
import fs from 'node:fs/promises';
import { runCapped } from '../process/capped-process.js';
import { type BundleHostKeys, type HostKeyChecking, type KnownHostEntry, parseKnownHosts } from '@baton/contracts';

/** How a git operation (or a run) checks host keys, and where keys it recorded on first contact go. */
export interface HostTrust {
  hostKeys?: BundleHostKeys | undefined;
  onHostKeys?: ((learned: KnownHostEntry[]) => void | Promise<void>) | undefined;
}

const STRICT_OPTION: Record<HostKeyChecking, string> = { strict: 'yes', accept_new: 'accept-new', off: 'no' };

/**
 * ssh options for a policy: `off` accepts any key and writes none down; the others check against `knownHostsFile`
 * alone. HashKnownHosts=no keeps recorded names readable (Debian's ssh_config hashes them); UpdateHostKeys=no stops
 * ssh from adding a host's other keys behind the policy's back.
 */
export function sshHostKeyOptions(
  checking: HostKeyChecking,
  knownHostsFile: string,
  quote: (s: string) => string,
): string {
  if (checking === 'off')
    return '-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o GlobalKnownHostsFile=/dev/null';
  return [
    `-o StrictHostKeyChecking=${STRICT_OPTION[checking]}`,
    `-o UserKnownHostsFile=${quote(knownHostsFile)}`,
    '-o GlobalKnownHostsFile=/dev/null',
    '-o HashKnownHosts=no',
    '-o UpdateHostKeys=no',
    '-o CheckHostIP=no',
  ].join(' ');
}

/** The entries in `file` that `given` did not hold: what ssh recorded. A missing or unreadable file records nothing. */
export async function learnedHostKeys(file: string, given: string): Promise<KnownHostEntry[]> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    return [];
  }
  const before = new Set(parseKnownHosts(given).entries.map((e) => `${e.host} ${e.key_type} ${e.key}`));
  return parseKnownHosts(text).entries.filter((e) => !before.has(`${e.host} ${e.key_type} ${e.key}`));
}

export const HOST_KEY_CHANGED = 'host key changed';
export const HOST_KEY_UNKNOWN = 'host key unknown';

/** Why ssh refused a host, when it was its host key: `host key changed` or `host key unknown` (strict). */
export function hostKeyRefusal(text: string): typeof HOST_KEY_CHANGED | typeof HOST_KEY_UNKNOWN | undefined {
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key for \S+ has changed/i.test(text)) return HOST_KEY_CHANGED;
  if (/Host key verification failed|No \S+ host key is known for/i.test(text)) return HOST_KEY_UNKNOWN;
  return undefined;
}

/** A short git failure reason for a host key refusal, in place of ssh's banner; undefined for any other failure. */
export function withHostKeyReason(stderr: string): string | undefined {
  const refusal = hostKeyRefusal(stderr);
  if (!refusal) return undefined;
  const host = /(?:Host key for|host key is known for) (\S+)/.exec(stderr)?.[1]?.replace(/\.$/, '');
  const name = host ? ` of ${host}` : '';
  return refusal === HOST_KEY_CHANGED
    ? `host key changed: the git server's key${name} no longer matches the stored one; pin the new key under the project's known hosts if the change is expected`
    : `host key unknown: the git server's key${name} is not stored and host key checking is strict; pin it under the project's known hosts`;
}

/** How long ssh-keyscan waits for each host when confirming keys a run recorded. */
const KEYSCAN_TIMEOUT_S = 5;
const KEYSCAN_BATCH = 256;

const keyId = (e: KnownHostEntry) => `${e.host} ${e.key_type} ${e.key}`;

/**
 * The learned entries the hosts themselves still present. The run's known_hosts file lies in its run directory, which
 * the playbook may write: a playbook could plant a key for a host ssh never met, and accept_new would then trust it
 * for every later run. Asking each host for its key again (ssh-keyscan, outside the run) keeps only what ssh saw.
 */
export async function confirmedByHosts(learned: KnownHostEntry[], env: NodeJS.ProcessEnv): Promise<KnownHostEntry[]> {
  if (learned.length === 0) return [];
  const byPort = new Map<string, Set<string>>();
  for (const e of learned) {
    const m = /^\[(.+)\]:(\d+)$/.exec(e.host);
    const [name, port] = m ? [m[1]!, m[2]!] : [e.host, '22'];
    const set = byPort.get(port) ?? new Set<string>();
    set.add(name);
    byPort.set(port, set);
  }
  const seen = new Set<string>();
  for (const [port, names] of byPort) {
    const all = [...names];
    for (let i = 0; i < all.length; i += KEYSCAN_BATCH) {
      const hosts = all.slice(i, i + KEYSCAN_BATCH);
      const r = await runCapped('ssh-keyscan', ['-T', String(KEYSCAN_TIMEOUT_S), '-p', port, '--', ...hosts], {
        cwd: '/',
        env,
        timeoutMs: (KEYSCAN_TIMEOUT_S + 5) * 1000 * Math.max(1, Math.ceil(hosts.length / 64)),
        maxOutputBytes: 16 * 1024 * 1024,
      }).catch(() => undefined);
      for (const e of parseKnownHosts(r?.stdout ?? '').entries) seen.add(keyId(e));
    }
  }
  return learned.filter((e) => seen.has(keyId(e)));
}
