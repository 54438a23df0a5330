// OpenSSH known_hosts lines (sshd(8), "SSH_KNOWN_HOSTS FILE FORMAT"), the subset Baton stores: plain host names
// (`name` or `[name]:port`, several comma-separated), a key type and its base64 blob. Hashed names, wildcards,
// negations and @cert-authority/@revoked markers are refused: a stored entry must name the host it trusts.
// Pure and total: parsing never throws, it answers entries or the problem of each bad line.

/** The key types OpenSSH offers as host keys today (DSA is gone since OpenSSH 9.8). */
export const HOST_KEY_TYPES = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'ssh-rsa',
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
] as const;
export type HostKeyType = (typeof HOST_KEY_TYPES)[number];

export interface KnownHostEntry {
  /** as ssh writes it: `name`, or `[name]:port` for a port other than 22 */
  host: string;
  key_type: HostKeyType;
  /** the base64 key blob */
  key: string;
}

export interface KnownHostsLineProblem {
  /** 1-based line of the text */
  line: number;
  message: string;
}

export const MAX_KNOWN_HOSTS_ENTRIES = 10_000;
const MAX_HOST_CHARS = 300;
const MAX_KEY_CHARS = 16_384;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** A host name or address ssh can be asked for: no pattern characters, no spaces, no control characters. */
const HOST_NAME = /^[A-Za-z0-9._:%-]+$/;

/** `name` / `[name]:port` → a problem, or undefined when ssh would write it this way. */
export function knownHostNameProblem(host: string): string | undefined {
  if (host.length === 0 || host.length > MAX_HOST_CHARS) return `a host is 1 to ${MAX_HOST_CHARS} characters`;
  if (host.startsWith('|')) return 'hashed host names are not accepted: give the names (ssh-keyscan without -H)';
  if (/[*?!]/.test(host)) return 'host patterns (*, ?, !) are not accepted: give each host by name';
  const bracketed = /^\[([^\]]+)\]:([0-9]{1,5})$/.exec(host);
  if (bracketed) {
    const port = Number(bracketed[2]);
    if (port < 1 || port > 65535) return `port ${bracketed[2]} is out of range`;
    if (port === 22) return `write [name]:22 as the bare name, as ssh does`;
    return HOST_NAME.test(bracketed[1]!) ? undefined : `${JSON.stringify(host)} is not a host name or address`;
  }
  return HOST_NAME.test(host) ? undefined : `${JSON.stringify(host)} is not a host name or address`;
}

/** The key type named inside the blob: a blob of another type (or not a key at all) is refused. */
function blobProblem(keyType: string, key: string): string | undefined {
  if (key.length > MAX_KEY_CHARS || !BASE64.test(key) || key.length % 4 !== 0) return 'the key is not base64';
  const blob = Buffer.from(key, 'base64');
  if (blob.length < 4) return 'the key is too short';
  const nameLength = blob.readUInt32BE(0);
  if (nameLength > 64 || 4 + nameLength > blob.length) return 'the key is not an SSH public key';
  const named = blob.subarray(4, 4 + nameLength).toString('latin1');
  if (named !== keyType) return `the key blob is a ${JSON.stringify(named.slice(0, 64))} key, not ${keyType}`;
  return undefined;
}

/** One public key's problem (its type and blob), or undefined. */
export function hostKeyProblem(keyType: string, key: string): string | undefined {
  if (!(HOST_KEY_TYPES as readonly string[]).includes(keyType))
    return `unknown key type ${JSON.stringify(keyType.slice(0, 64))}: one of ${HOST_KEY_TYPES.join(', ')}`;
  return blobProblem(keyType, key);
}

/**
 * Entries of known_hosts text; blank lines and `#` comments are skipped. `forHost`: the lines may also be bare
 * public keys (`type key [comment]`, a .pub file, ssh-keyscan output without the name) for that one host, and a
 * line naming another host is a problem.
 */
export function parseKnownHosts(
  text: string,
  forHost?: string,
): { entries: KnownHostEntry[]; problems: KnownHostsLineProblem[] } {
  const entries: KnownHostEntry[] = [];
  const problems: KnownHostsLineProblem[] = [];
  const seen = new Set<string>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '').trim();
    if (line === '' || line.startsWith('#')) continue;
    const problem = (message: string) => problems.push({ line: i + 1, message });
    if (line.startsWith('@')) {
      problem('@cert-authority and @revoked lines are not accepted');
      continue;
    }
    const fields = line.split(/[ \t]+/);
    let hosts: string[];
    let keyType: string;
    let key: string;
    if (forHost !== undefined && (HOST_KEY_TYPES as readonly string[]).includes(fields[0]!)) {
      [keyType, key] = [fields[0]!, fields[1] ?? ''];
      hosts = [forHost];
    } else {
      if (fields.length < 3) {
        problem('expected "host key-type key" (a known_hosts line)');
        continue;
      }
      hosts = fields[0]!.split(',');
      [keyType, key] = [fields[1]!, fields[2]!];
    }
    const hostProblem = hosts.map(knownHostNameProblem).find((p) => p !== undefined);
    if (hostProblem) {
      problem(hostProblem);
      continue;
    }
    if (forHost !== undefined && hosts.some((h) => h !== forHost)) {
      problem(`the line names ${hosts.filter((h) => h !== forHost).join(', ')}, not ${forHost}`);
      continue;
    }
    const keyProblem = hostKeyProblem(keyType, key);
    if (keyProblem) {
      problem(keyProblem);
      continue;
    }
    for (const host of hosts) {
      const id = `${host} ${keyType} ${key}`;
      if (seen.has(id)) continue;
      seen.add(id);
      entries.push({ host, key_type: keyType as HostKeyType, key });
    }
    if (entries.length > MAX_KNOWN_HOSTS_ENTRIES) {
      problem(`more than ${MAX_KNOWN_HOSTS_ENTRIES} entries`);
      break;
    }
  }
  return { entries, problems };
}

/** The entries as known_hosts lines, one per entry. */
export function formatKnownHosts(entries: ReadonlyArray<{ host: string; key_type: string; key: string }>): string {
  return entries.map((e) => `${e.host} ${e.key_type} ${e.key}\n`).join('');
}
