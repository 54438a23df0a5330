import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import {
  detectInventoryFormat,
  InventoryParseError,
  InventorySourceError,
  parseInventory,
  runInventorySource,
  scriptJsonToYamlInventory,
} from './ansible-inventory.js';

const INI = `# web and database servers
[web]
web1 ansible_host=10.0.0.1
web2

[db]
db1

[prod:children]
web
db
`;
const YAML = `all:
  children:
    prod:
      children:
        web:
          hosts:
            web1:
              ansible_host: 10.0.0.1
            web2:
        db:
          hosts:
            db1:
`;
const JSON_INVENTORY = JSON.stringify({
  prod: {
    children: { web: { hosts: { web1: { ansible_host: '10.0.0.1' }, web2: null } }, db: { hosts: { db1: null } } },
  },
});
const EXPECTED_HOSTS = [
  { name: 'db1', groups: ['db', 'prod'] },
  { name: 'web1', groups: ['prod', 'web'] },
  { name: 'web2', groups: ['prod', 'web'] },
];

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-inv-test-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

async function parseError(content: string): Promise<InventoryParseError> {
  const err = await parseInventory({ content }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InventoryParseError);
  return err as InventoryParseError;
}

describe('detectInventoryFormat', () => {
  it.each([
    ['ini', INI],
    ['yaml', YAML],
    ['json', JSON_INVENTORY],
    ['yaml', '---\nall: {}\n'],
    ['ini', 'web1:2222\nweb2\n'],
    ['ini', ''],
  ])('sees %s', (format, content) => {
    expect(detectInventoryFormat(content)).toBe(format);
  });
});

describe('parseInventory with the real ansible-inventory', () => {
  it.each([
    ['ini', INI],
    ['yaml', YAML],
    ['json', JSON_INVENTORY],
  ])('reads %s into the same hosts and groups', async (format, content) => {
    const parsed = await parseInventory({ content });
    expect(parsed.format).toBe(format);
    expect(parsed.hosts).toEqual(EXPECTED_HOSTS);
    expect(parsed.groups).toEqual(
      expect.arrayContaining([
        { name: 'prod', hosts: [], children: expect.arrayContaining(['db', 'web']) },
        { name: 'web', hosts: ['web1', 'web2'], children: [] },
      ]),
    );
    expect(parsed.list).toMatchObject({ _meta: { hostvars: { web1: { ansible_host: '10.0.0.1' } } } });
  });

  it('reports an INI syntax error with ansible’s own message and without the temp path', async () => {
    const err = await parseError('[web\nweb1\n');
    expect(err.message).toContain('Failed to parse inventory.ini with ini plugin');
    expect(err.message).not.toContain(os.tmpdir());
  });

  it('reports a YAML syntax error with the line ansible points at', async () => {
    const err = await parseError('all:\n  hosts: [a, b\n');
    expect(err.message).toContain('yaml plugin');
    expect(err.message).toMatch(/line \d+, column \d+/);
    expect(err.message).not.toContain(os.tmpdir());
  });

  it('refuses a JSON document that is not valid JSON', async () => {
    expect((await parseError('{"web": ')).message).toContain('Completely failed to parse inventory source');
  });

  it('never executes content that looks like a script', async () => {
    const marker = path.join(scratch, `pwned-${crypto.randomBytes(6).toString('hex')}`);
    const err = await parseError(`#!/bin/sh\ntouch ${marker}\n`);
    expect(err.message).toContain('ini plugin');
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('stops ansible-inventory when its output passes the cap', async () => {
    const err = await parseInventory({ content: INI, maxOutputBytes: 10 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InventoryParseError);
    expect((err as Error).message).toContain('more than 10 bytes');
  });
});

describe('scriptJsonToYamlInventory', () => {
  it('turns script JSON into the YAML inventory shape with host vars on the first appearance', () => {
    const script = {
      web: { hosts: ['a', 'b'], vars: { tier: 'front' } },
      all: { children: ['web', 'db'] },
      db: ['a'],
      _meta: { hostvars: { a: { x: 1 } } },
    };
    expect(scriptJsonToYamlInventory(script)).toEqual({
      web: { hosts: { a: { x: 1 }, b: null }, vars: { tier: 'front' } },
      all: { children: { web: null, db: null } },
      db: { hosts: { a: null } },
    });
  });

  it.each([
    ['a list', [1, 2]],
    ['a string', 'hosts'],
    ['a group that is a number', { web: 3 }],
  ])('refuses %s', (_what, script) => {
    expect(() => scriptJsonToYamlInventory(script)).toThrow(InventorySourceError);
  });
});

describe('runInventorySource', () => {
  const LIMITS = { timeoutMs: 30_000, maxOutputBytes: 1024 * 1024 };

  function writeScript(name: string, body: string): string {
    const file = path.join(scratch, name);
    fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return file;
  }

  it('runs an executable inventory script with only the script plugin enabled', async () => {
    const script = writeScript(
      'inventory.sh',
      `cat <<'JSON'\n{"web": {"hosts": ["s1", "s2"]}, "_meta": {"hostvars": {"s1": {"port": 22}}}}\nJSON`,
    );
    const result = await runInventorySource({ source: script, enablePlugins: ['script'], ...LIMITS });
    expect(result.hosts).toEqual([
      { name: 's1', groups: ['web'] },
      { name: 's2', groups: ['web'] },
    ]);
    expect(result.format).toBe('json');
    // The stored form reads back as a plain inventory, with the host vars.
    const reread = await parseInventory({ content: result.content });
    expect(reread.hosts).toEqual(result.hosts);
    expect(reread.list).toMatchObject({ _meta: { hostvars: { s1: { port: 22 } } } });
  });

  it('runs a plugin config file through the auto plugin', async () => {
    const config = path.join(scratch, 'hosts.generator.yml');
    fs.writeFileSync(
      config,
      'plugin: ansible.builtin.generator\nhosts:\n  name: "{{ app }}-{{ env }}"\nlayers:\n  app: [api, web]\n  env: [prod]\n',
    );
    const result = await runInventorySource({ source: config, enablePlugins: ['auto'], ...LIMITS });
    expect(result.hosts.map((h) => h.name)).toEqual(['api-prod', 'web-prod']);
  });

  it('reports a failing script as a source error with its message', async () => {
    const script = writeScript('broken.sh', 'echo "cmdb is down" >&2\nexit 3');
    const err = await runInventorySource({ source: script, enablePlugins: ['script'], ...LIMITS }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InventorySourceError);
    expect((err as Error).message).toContain('cmdb is down');
  });

  it('kills a script that runs past the timeout, with its children', async () => {
    const marker = path.join(scratch, `late-${crypto.randomBytes(6).toString('hex')}`);
    const script = writeScript('slow.sh', `(sleep 2; touch ${marker}) &\nsleep 30`);
    const err = await runInventorySource({
      source: script,
      enablePlugins: ['script'],
      timeoutMs: 1000,
      maxOutputBytes: 1024,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InventorySourceError);
    expect((err as Error).message).toContain('did not finish within 1 s');
    await new Promise((r) => setTimeout(r, 2500));
    expect(fs.existsSync(marker)).toBe(false);
  });
});
