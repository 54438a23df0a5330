import { describe, expect, it } from '@jest/globals';
import { InventoryParseError, parseInventory } from './ansible-inventory.js';
import { probeBwrap } from '../sandbox/sandbox.js';
import { HostPatternError, hostLimitProblem, inventoryForHosts, inventoryHosts } from './inventory-shards.js';

const INI = `[web]
web3 ansible_host=10.0.0.3
web1 ansible_host=10.0.0.1 role=front
web2

[db]
db1 ansible_port=2222

[prod:children]
web
db

[prod:vars]
env=prod

[web:vars]
tier=web
`;

const YAML = `all:
  hosts:
    lonely:
      note: "{{ not_templated }}"
  children:
    app:
      hosts:
        app-b:
          vaulted: !vault |
            $ANSIBLE_VAULT;1.1;AES256
            30636666633532333035383739343139643766343763336562343762643233633436373233663735
            6638646335613963336165383536363164626532333731310a636135383733323661316363306163
            37373564623334616537316334633363636539366132316434663033376433623335353966316163
            6262366533633366340a313364333663666136353335353335313330353536356130616139653864
            6666
        app-a:
          secret: !unsafe "{{ lookup('pipe', 'id') }}"
`;

async function errorOf(promise: Promise<unknown>): Promise<Error> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Error);
  return err as Error;
}

describe('inventoryHosts with the real ansible', () => {
  it('lists every host sorted by name when there is no limit', async () => {
    const { hosts, list } = await inventoryHosts({ content: INI });
    expect(hosts).toEqual(['db1', 'web1', 'web2', 'web3']);
    expect(list).toMatchObject({
      _meta: { hostvars: { web1: { ansible_host: '10.0.0.1', role: 'front', env: 'prod', tier: 'web' } } },
    });
  });

  it.each([
    ['a group', 'web', ['web1', 'web2', 'web3']],
    ['a group minus a host', 'web:!web2', ['web1', 'web3']],
    ['an intersection', 'prod:&db', ['db1']],
    ['a list with a glob', 'db*,web1', ['db1', 'web1']],
    ['a regex', '~web[13]', ['web1', 'web3']],
    ['a pattern that matches nothing', 'nothing-here', []],
  ])('applies ansible’s own limit rules: %s', async (_what, limit, expected) => {
    expect((await inventoryHosts({ content: INI, limit })).hosts).toEqual(expected);
  });

  it('reads YAML too, hosts without a group included', async () => {
    expect((await inventoryHosts({ content: YAML })).hosts).toEqual(['app-a', 'app-b', 'lonely']);
  });

  it('refuses content ansible cannot parse with its message', async () => {
    const err = await errorOf(inventoryHosts({ content: '[web\nweb1\n' }));
    expect(err).toBeInstanceOf(InventoryParseError);
    expect(err.message).toMatch(/Failed to parse inventory\.ini with ini plugin/);
  });

  it.each(['@/etc/hostname', 'web,@/etc/hostname', 'web: @/etc/hostname'])(
    'refuses a limit that reads a file: %s',
    async (limit) => {
      expect(hostLimitProblem(limit)).toBeDefined();
      expect(await errorOf(inventoryHosts({ content: INI, limit }))).toBeInstanceOf(HostPatternError);
    },
  );

  it('gives the same answer inside the bubblewrap sandbox', async () => {
    expect(await probeBwrap()).toEqual({ available: true });
    const sandbox = { mode: 'bwrap' as const, hidden: [] };
    expect((await inventoryHosts({ content: INI, limit: 'web:!web2', sandbox })).hosts).toEqual(['web1', 'web3']);
    expect((await inventoryHosts({ content: INI, sandbox })).hosts).toEqual(['db1', 'web1', 'web2', 'web3']);
  });

  it('passes a limit that looks like an option to ansible as the value it is', async () => {
    expect((await inventoryHosts({ content: INI, limit: '--version' })).hosts).toEqual([]);
  });
});

describe('inventoryForHosts', () => {
  it('splits an INI inventory into shards of exactly their hosts, vars and groups', async () => {
    const { hosts, list } = await inventoryHosts({ content: INI });
    const shards = [0, 1].map((k) => hosts.filter((_, i) => i % 2 === k));
    expect(shards).toEqual([
      ['db1', 'web2'],
      ['web1', 'web3'],
    ]);
    const [first, second] = await Promise.all(
      shards.map((s) => parseInventory({ content: inventoryForHosts(list, s) })),
    );
    expect(first!.hosts).toEqual([
      { name: 'db1', groups: ['db', 'prod'] },
      { name: 'web2', groups: ['prod', 'web'] },
    ]);
    expect(second!.hosts).toEqual([
      { name: 'web1', groups: ['prod', 'web'] },
      { name: 'web3', groups: ['prod', 'web'] },
    ]);
    expect(first!.list._meta).toEqual({
      hostvars: { db1: { ansible_port: 2222, env: 'prod' }, web2: { env: 'prod', tier: 'web' } },
    });
    expect(second!.list._meta).toEqual({
      hostvars: {
        web1: { ansible_host: '10.0.0.1', role: 'front', env: 'prod', tier: 'web' },
        web3: { ansible_host: '10.0.0.3', env: 'prod', tier: 'web' },
      },
    });
  });

  it('keeps hosts outside any group, and the !unsafe and !vault markers of values', async () => {
    const { list } = await inventoryHosts({ content: YAML });
    const shard = await parseInventory({ content: inventoryForHosts(list, ['app-a', 'lonely']) });
    expect(shard.hosts).toEqual([
      { name: 'app-a', groups: ['app'] },
      { name: 'lonely', groups: ['ungrouped'] },
    ]);
    expect(shard.list._meta).toEqual({
      hostvars: {
        'app-a': { secret: { __ansible_unsafe: "{{ lookup('pipe', 'id') }}" } },
        lonely: { note: '{{ not_templated }}' },
      },
    });
    const vaulted = await parseInventory({ content: inventoryForHosts(list, ['app-b']) });
    expect(vaulted.list._meta).toEqual({
      hostvars: {
        'app-b': {
          vaulted: { __ansible_vault: expect.stringMatching(/^\$ANSIBLE_VAULT;1\.1;AES256\n[0-9a-f]{80}\n/) },
        },
      },
    });
  });

  it('refuses a host the inventory does not have', async () => {
    const { list } = await inventoryHosts({ content: INI });
    expect(() => inventoryForHosts(list, ['web1', 'ghost'])).toThrow(/ghost/);
  });
});
