import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startHttpsServer, type TestHttpsServer } from '../testing/https-server.js';
import { InventorySourceError } from './ansible-inventory.js';
import { fetchInventoryUrl, loadUrlInventory } from './inventory-url.js';

const LIMITS = { timeoutMs: 10_000, maxBytes: 64 * 1024 };
const SCRIPT_JSON = JSON.stringify({
  web: { hosts: ['w1', 'w2'], vars: { tier: 'front' } },
  _meta: { hostvars: { w1: { ansible_host: '10.1.0.1' } } },
});

let server: TestHttpsServer;
beforeAll(async () => {
  server = await startHttpsServer();
  server.routes.set('/inventory', { body: SCRIPT_JSON });
  server.routes.set('/not-json', { body: 'hello' });
  server.routes.set('/not-script', { body: '[1, 2, 3]' });
  server.routes.set('/big', {
    body: JSON.stringify({ web: { hosts: Array.from({ length: 10_000 }, (_, i) => `host-${i}`) } }),
  });
  server.routes.set('/redirect', {
    status: 302,
    body: '',
    headers: { location: 'https://169.254.169.254/latest/meta-data/' },
  });
});
afterAll(() => server.close());

async function refusal(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InventorySourceError);
  return (err as Error).message;
}

describe('fetchInventoryUrl', () => {
  it.each([
    ['the cloud metadata address', 'https://169.254.169.254/latest/meta-data/', 'link-local'],
    ['a link-local IPv6 address', 'https://[fe80::1]/inv', 'link-local'],
    ['the AWS IPv6 metadata address', 'https://[fd00:ec2::254]/inv', 'metadata'],
    ['the GCP metadata host name', 'https://metadata.google.internal/computeMetadata/v1/', 'metadata'],
    ['the unspecified address', 'https://0.0.0.0/inv', 'unspecified'],
    [
      'an IPv4-mapped metadata address',
      'https://[::ffff:169.254.169.254]/inv',
      'IPv4-mapped address for 169.254.169.254',
    ],
    ['a NAT64 metadata address', 'https://[64:ff9b::a9fe:a9fe]/inv', 'NAT64 address for 169.254.169.254'],
    ['a local-use NAT64 metadata address', 'https://[64:ff9b:1::a9fe:a9fe]/inv', 'NAT64 address for 169.254.169.254'],
    ['a 6to4 metadata address', 'https://[2002:a9fe:a9fe::1]/inv', '6to4 address for 169.254.169.254'],
    ['plain http', 'http://127.0.0.1/inv', 'only https'],
  ])('refuses %s before connecting', async (_what, url, words) => {
    const before = server.authorizations.length;
    expect(await refusal(fetchInventoryUrl({ url, ca: server.ca, ...LIMITS }))).toContain(words);
    expect(server.authorizations.length).toBe(before);
  });

  // The classifier itself is table-tested in @baton/contracts (refused-address.test.ts); here: DNS answers go through it.
  it.each([
    ['169.254.169.254'],
    ['::ffff:169.254.169.254'],
    ['::ffff:a9fe:a9fe'],
    ['64:ff9b::a9fe:a9fe'],
    ['64:ff9b:1::a9fe:a9fe'],
    ['2002:a9fe:a9fe::'],
    ['fd00:ec2::254'],
  ])('refuses a host name that resolves to %s, even beside a good address, before connecting', async (address) => {
    const before = server.authorizations.length;
    const resolve = async (host: string) =>
      host === 'cmdb.example.test'
        ? [
            { address: '127.0.0.1', family: 4 },
            { address, family: address.includes(':') ? 6 : 4 },
          ]
        : [];
    const message = await refusal(
      fetchInventoryUrl({ url: 'https://cmdb.example.test/inv', resolve, ca: server.ca, ...LIMITS }),
    );
    expect(message).toContain(`cmdb.example.test resolves to a refused address: ${address} is`);
    expect(server.authorizations.length).toBe(before);
  });

  it('asks the resolver for the host name and connects to the address it checked', async () => {
    const asked: string[] = [];
    const resolve = async (host: string) => {
      asked.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const json = await fetchInventoryUrl({
      url: `https://localhost:${new URL(server.origin).port}/inventory`,
      resolve,
      ca: server.ca,
      ...LIMITS,
    });
    expect(json).toEqual(JSON.parse(SCRIPT_JSON));
    expect(asked).toEqual(['localhost']);
  });

  it('fetches from a local HTTPS server it was told to trust, sending the token', async () => {
    const json = await fetchInventoryUrl({
      url: `${server.origin}/inventory`,
      token: 's3cret',
      ca: server.ca,
      ...LIMITS,
    });
    expect(json).toEqual(JSON.parse(SCRIPT_JSON));
    expect(server.authorizations.at(-1)).toBe('Bearer s3cret');
  });

  it('does not trust a self-signed certificate it was not given', async () => {
    expect(await refusal(fetchInventoryUrl({ url: `${server.origin}/inventory`, ...LIMITS }))).toMatch(/certificate/i);
  });

  it('does not follow redirects', async () => {
    expect(await refusal(fetchInventoryUrl({ url: `${server.origin}/redirect`, ca: server.ca, ...LIMITS }))).toContain(
      'HTTP 302',
    );
  });

  it('caps the answer size and refuses bodies that are not JSON', async () => {
    expect(
      await refusal(
        fetchInventoryUrl({ url: `${server.origin}/big`, ca: server.ca, timeoutMs: 10_000, maxBytes: 1000 }),
      ),
    ).toContain('larger than 1000 bytes');
    expect(await refusal(fetchInventoryUrl({ url: `${server.origin}/not-json`, ca: server.ca, ...LIMITS }))).toContain(
      'not JSON',
    );
    expect(await refusal(fetchInventoryUrl({ url: `${server.origin}/missing`, ca: server.ca, ...LIMITS }))).toContain(
      'HTTP 404',
    );
  });
});

describe('loadUrlInventory', () => {
  it('validates the fetched script JSON with ansible-inventory and returns storable content', async () => {
    const inv = await loadUrlInventory({ url: `${server.origin}/inventory`, ca: server.ca, ...LIMITS });
    expect(inv.format).toBe('json');
    expect(inv.hosts).toEqual([
      { name: 'w1', groups: ['web'] },
      { name: 'w2', groups: ['web'] },
    ]);
    expect(inv.list).toMatchObject({ _meta: { hostvars: { w1: { ansible_host: '10.1.0.1', tier: 'front' } } } });
    expect(JSON.parse(inv.content)).toEqual({
      web: { hosts: { w1: { ansible_host: '10.1.0.1' }, w2: null }, vars: { tier: 'front' } },
    });
  });

  it('refuses JSON that is not inventory-script JSON', async () => {
    expect(await refusal(loadUrlInventory({ url: `${server.origin}/not-script`, ca: server.ca, ...LIMITS }))).toContain(
      'not inventory-script JSON',
    );
  });
});
