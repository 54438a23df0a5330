// The `url` kind of dynamic inventory: fetch inventory-script JSON over HTTPS, refusing addresses that
// would let a user read cloud metadata or poke at link-local services through the server.
import https from 'node:https';
import net from 'node:net';
import { type Address, checkedFetchAddress, type Resolve } from '../network/fetch-destination.js';
import {
  InventorySourceError,
  parseInventory,
  scriptJsonToYamlInventory,
  type SourceInventory,
} from './ansible-inventory.js';

export interface FetchInventoryUrlOptions {
  url: string;
  /** sent as `Authorization: Bearer <token>` */
  token?: string | undefined;
  timeoutMs: number;
  maxBytes: number;
  /** extra trusted CA certificates (PEM); production uses the system store, tests pass their own */
  ca?: string | string[] | undefined;
  /** BATON_FETCH_DENY_PRIVATE: loopback and private addresses are refused too */
  denyPrivate?: boolean | undefined;
  /** every address of a host name; production asks the system resolver, tests answer what they need */
  resolve?: Resolve | undefined;
}

/**
 * Resolves every address of the host and refuses the lot if any one of them is refused, by the same classifier that
 * checked the URL when it was saved (@baton/contracts refused-address), and the fetch policy.
 */
async function checkedAddress(hostname: string, opts: FetchInventoryUrlOptions): Promise<Address> {
  const checked = await checkedFetchAddress(hostname, {
    denyPrivate: opts.denyPrivate ?? false,
    resolve: opts.resolve,
  });
  if (!checked.ok) throw new InventorySourceError(checked.reason);
  return checked.address;
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
  if (url.protocol !== 'https:')
    throw new InventorySourceError(`refused: only https URLs are fetched, not ${url.protocol.replace(/:$/, '')}`);
  const target = await checkedAddress(url.hostname, opts);

  const body = await new Promise<Buffer>((resolve, reject) => {
    const req = https.request(url, {
      method: 'GET',
      headers: { Accept: 'application/json', ...(opts.token ? { Authorization: `Bearer ${opts.token}` } : {}) },
      ca: opts.ca,
      servername: net.isIP(url.hostname.replace(/^\[|\]$/g, '')) ? undefined : url.hostname,
      // Node asks for every address (`all`, for its happy-eyeballs connect) or for one; either way: the checked one.
      lookup: (_host, lookupOpts, cb) =>
        lookupOpts.all ? cb(null, [target]) : cb(null, target.address, target.family),
      // Pooled sockets could outlive the checked address.
      agent: false,
    });
    const timer = setTimeout(
      () =>
        req.destroy(
          new InventorySourceError(`no complete answer from ${url.host} within ${Math.round(opts.timeoutMs / 1000)} s`),
        ),
      opts.timeoutMs,
    );
    const fail = (err: Error) => {
      clearTimeout(timer);
      reject(
        err instanceof InventorySourceError
          ? err
          : new InventorySourceError(`fetching ${url.host} failed: ${err.message}`),
      );
    };
    req.on('error', fail);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status !== 200) {
        res.resume();
        fail(
          new InventorySourceError(
            `${url.host} answered HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`,
          ),
        );
        req.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > opts.maxBytes)
          req.destroy(new InventorySourceError(`the answer from ${url.host} is larger than ${opts.maxBytes} bytes`));
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
export async function loadUrlInventory(
  opts: FetchInventoryUrlOptions & { parseTimeoutMs?: number },
): Promise<SourceInventory> {
  const script = await fetchInventoryUrl(opts);
  const content = JSON.stringify(scriptJsonToYamlInventory(script), null, 2);
  try {
    const parsed = await parseInventory({ content, timeoutMs: opts.parseTimeoutMs });
    return { ...parsed, format: 'json', content };
  } catch (err) {
    throw new InventorySourceError(
      `the inventory from ${new URL(opts.url).host} was refused by ansible: ${(err as Error).message}`,
    );
  }
}
