// Hosts as ssh names them in known_hosts: the address it connects to, `[address]:port` when the port is not 22.

/** known_hosts' name for `address` on `port`. */
export function sshHostName(address: string, port?: unknown): string {
  const p = port === undefined || port === null || port === '' ? 22 : Number(port);
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  return Number.isInteger(p) && p !== 22 ? `[${bare}]:${p}` : bare;
}

/** How ssh names an inventory host: its ansible_host (else its name), with its ansible_port. */
export function inventorySshHost(name: string, vars: Record<string, unknown> | undefined): string {
  const address = vars?.ansible_host ?? vars?.ansible_ssh_host;
  const port = vars?.ansible_port ?? vars?.ansible_ssh_port;
  return sshHostName(typeof address === 'string' && address ? address : name, port);
}

/** ssh host → the inventory host names that connect to it (several names may share an address). */
export function inventoryNamesBySshHost(
  names: Iterable<string>,
  hostVars: Record<string, Record<string, unknown>>,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const name of new Set(names)) {
    const host = inventorySshHost(name, hostVars[name]);
    out.set(host, [...(out.get(host) ?? []), name].sort());
  }
  return out;
}

/** The git server a project reaches over SSH (ssh://…, or scp-like user@host:path); undefined for other URLs. */
export function gitSshHost(gitUrl: string): string | undefined {
  const url = /^(?:ssh|git\+ssh|ssh\+git):\/\/(?:[^@/]*@)?(\[[^\]]+\]|[^:/[\]]+)(?::(\d+))?(?:\/|$)/i.exec(gitUrl);
  if (url) return sshHostName(url[1]!, url[2]);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(gitUrl)) return undefined;
  const scp = /^(?:[^@/:]+@)?(\[[^\]]+\]|[^:/[\]]+):(?!\/\/)/.exec(gitUrl);
  return scp ? sshHostName(scp[1]!) : undefined;
}
