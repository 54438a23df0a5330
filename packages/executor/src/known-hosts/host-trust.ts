// ssh host key checking for runs and git: the stored keys become a private known_hosts file, ssh checks against it
// (and only it: no system or user file) by the owner's policy, and what ssh added on first contact is read back so
// the server can keep it. Keys are named as ssh connects (the address or name it was given, `[name]:port` off 22).
import fs from 'node:fs/promises';
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
