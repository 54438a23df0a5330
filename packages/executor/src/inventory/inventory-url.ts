// The `url` kind of dynamic inventory: fetch inventory-script JSON over HTTPS, refusing addresses that
// would let a user read cloud metadata or poke at link-local services through the server.
import dns from 'node:dns/promises';
import https from 'node:https';
import net from 'node:net';
import { InventorySourceError, parseInventory, scriptJsonToYamlInventory, type SourceInventory } from './ansible-inventory.js';

/** Host names of cloud metadata services, refused before any DNS lookup. */
const METADATA_HOSTNAMES = new Set(['metadata.google.internal', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

const REFUSED = new net.BlockList();
REFUSED.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local, includes 169.254.169.254 (AWS, GCP, Azure, OpenStack metadata)
REFUSED.addSubnet('0.0.0.0', 8, 'ipv4'); // "this network"; 0.0.0.0 connects to the local host on Linux
REFUSED.addAddress('100.100.100.200', 'ipv4'); // Alibaba Cloud metadata
REFUSED.addSubnet('fe80::', 10, 'ipv6'); // link-local
REFUSED.addAddress('fd00:ec2::254', 'ipv6'); // AWS metadata over IPv6
REFUSED.addAddress('::', 'ipv6'); // unspecified

/**
 * Whether an address is refused. Loopback and private ranges are allowed on purpose: a self-hosted Baton
 * commonly reads inventory from a CMDB on the same host or LAN, and only admins and operators create sources.
 */
export function isRefusedAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return REFUSED.check(mapped[1]!, 'ipv4');
  const family = net.isIP(address);
  if (family === 0) return true;
  return REFUSED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export interface FetchInventoryUrlOptions {
  url: string;
  /** sent as `Authorization: Bearer <token>` */
  token?: string | undefined;
  timeoutMs: number;
  maxBytes: number;
  /** extra trusted CA certificates (PEM); production uses the system store, tests pass their own */
  ca?: string | string[] | undefined;
}

/** Resolves every address of the host and refuses the lot if any one of them is refused. */
async function checkedAddress(hostname: string): Promise<{ address: string; family: number }> {
  const bare = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (METADATA_HOSTNAMES.has(bare)) throw new InventorySourceError(`refused: ${bare} is a cloud metadata service`);
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = net.isIP(bare) ? [{ address: bare, family: net.isIP(bare) }] : await dns.lookup(bare, { all: true, verbatim: true });
  } catch (err) {
    throw new InventorySourceError(`cannot resolve ${bare}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const refused = addresses.find((a) => isRefusedAddress(a.address));
  if (refused) throw new InventorySourceError(`refused: ${bare} resolves to ${refused.address} (link-local, unspecified or cloud metadata)`);
  if (!addresses[0]) throw new InventorySourceError(`cannot resolve ${bare}: no address`);
  return addresses[0];
}

/**
 * GETs inventory-script JSON. https only; redirects are not followed (they could lead to a refused address);
 * the connection goes to the address that was checked, never to a second lookup (no DNS rebinding).
 */
export async function fetchInventoryUrl(opts: FetchInventoryUrlOptions): Promise<unknown> {
  let url: URL;
  try {
    url = new URL(opts.url);
  } catch {
    throw new InventorySourceError('not a URL');
  }
  if (url.protocol !== 'https:') throw new InventorySourceError(`refused: only https URLs are fetched, not ${url.protocol.replace(/:$/, '')}`);
  const target = await checkedAddress(url.hostname);

  const body = await new Promise<Buffer>((resolve, reject) => {
    const req = https.request(url, {
      method: 'GET',
      headers: { Accept: 'application/json', ...(opts.token ? { Authorization: `Bearer ${opts.token}` } : {}) },
      ca: opts.ca,
      servername: net.isIP(url.hostname.replace(/^\[|\]$/g, '')) ? undefined : url.hostname,
      lookup: (_host, _opts, cb) => cb(null, target.address, target.family),
      // Pooled sockets could outlive the checked address.
      agent: false,
    });
    const timer = setTimeout(() => req.destroy(new InventorySourceError(`no complete answer from ${url.host} within ${Math.round(opts.timeoutMs / 1000)} s`)), opts.timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      reject(err instanceof InventorySourceError ? err : new InventorySourceError(`fetching ${url.host} failed: ${err.message}`));
    };
    req.on('error', fail);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status !== 200) {
        res.resume();
        fail(new InventorySourceError(`${url.host} answered HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`));
        req.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > opts.maxBytes) req.destroy(new InventorySourceError(`the answer from ${url.host} is larger than ${opts.maxBytes} bytes`));
        else chunks.push(chunk);
      });
      res.on('error', fail);
      res.on('end', () => {
        clearTimeout(timer);
        resolve(Buffer.concat(chunks));
      });
    });
    req.end();
  });

  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new InventorySourceError(`the answer from ${url.host} is not JSON`);
  }
}

/**
 * Fetches a URL source and checks its JSON with the real ansible-inventory: converted to the YAML inventory
 * shape (the `script` plugin would need an executable file) and parsed like a stored inventory.
 */
export async function loadUrlInventory(opts: FetchInventoryUrlOptions & { parseTimeoutMs?: number }): Promise<SourceInventory> {
  const script = await fetchInventoryUrl(opts);
  const content = JSON.stringify(scriptJsonToYamlInventory(script), null, 2);
  try {
    const parsed = await parseInventory({ content, timeoutMs: opts.parseTimeoutMs });
    return { ...parsed, format: 'json', content };
  } catch (err) {
    throw new InventorySourceError(`the inventory from ${new URL(opts.url).host} was refused by ansible: ${(err as Error).message}`);
  }
}
