// The disk under an embedded installation's SQLite database fills up while `baton serve` takes writes: writes answer
// 503 `storage-full` (never 500) and reads go on; once space returns, writes work again without a restart, and the
// database passes SQLite's integrity check with exactly the writes that were acknowledged.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { ADMIN_PASSWORD, call, cleanupProcesses, login, ROOT, serve, type Server } from '../support/baton-process.js';
import { mountSmallFilesystem, type SmallFilesystem } from '../support/small-filesystem.js';
import { finishedRun, LOCAL_INVENTORY, recordingClient, unexpectedAnswers } from './support.js';

// better-sqlite3 is the db package's dependency: the check opens the file the way Baton does.
type SqliteHandle = {
  pragma(p: string, o: { simple: true }): unknown;
  prepare(s: string): { all(): unknown[] };
  close(): void;
};
const SqliteDatabase = createRequire(path.join(ROOT, 'packages/db/package.json'))('better-sqlite3') as new (
  file: string,
  opts?: { readonly?: boolean },
) => SqliteHandle;

let small: SmallFilesystem | undefined;
let server: Server | undefined;
afterAll(async () => {
  await server?.kill();
  await small?.destroy();
  await cleanupProcesses();
});

/** The server's logged errors (the cause behind a 500), for failure messages. */
const errorLines = (s: Server) =>
  s
    .output()
    .split('\n')
    .filter((l) => l.includes('"level":"error"'))
    .slice(-3);

/** Text big enough that a few writes need fresh pages (an inventory's content is stored as given). */
const bulk = (n: number) => `# ${'x'.repeat(20_000)} ${n}\n${LOCAL_INVENTORY}`;

describe('SQLite on a full disk', () => {
  it('answers 503 storage-full for writes, keeps reading, recovers when space returns, and stays sound', async () => {
    small = await mountSmallFilesystem(48);
    const dataDir = path.join(small.dir, 'data');
    server = await serve({
      BATON_DATA_DIR: dataDir,
      BATON_ADMIN_PASSWORD: ADMIN_PASSWORD,
      BATON_SANDBOX: 'off',
      BATON_EXECUTORS: '1',
    });
    const s = server;
    const { token } = await login(s.base, 'admin', ADMIN_PASSWORD);
    const client = recordingClient(s.base, token!);
    const created: string[] = [];
    let n = 0;
    const write = async () => {
      const a = await client.request('POST', '/v1/inventories', { name: `bulk ${++n}`, content: bulk(n) });
      if (a?.status === 201) created.push((JSON.parse(a.body) as { id: string }).id);
      return a;
    };
    for (let i = 0; i < 5; i++) expect((await write())?.status).toBe(201);

    const filler = small.fill();
    // Writes until one meets the full disk (the first few may still fit in pages SQLite holds free).
    let refused = await write();
    for (let i = 0; i < 100 && refused?.status === 201; i++) refused = await write();
    if (refused?.status !== 503)
      throw new Error(
        `a write on the full disk answered ${refused?.status}: ${refused?.body}\n${errorLines(s).join('\n')}`,
      );
    expect(JSON.parse(refused!.body)).toMatchObject({ type: 'urn:baton:problem:storage-full', status: 503 });
    // More writes of other kinds, and reads, while it is full.
    const inv = await client.request('POST', '/v1/inventories', { name: 'small', content: LOCAL_INVENTORY });
    for (let i = 0; i < 3; i++) await write();
    await client.request('POST', '/v1/runs', {
      playbook: '- hosts: all\n  gather_facts: false\n  tasks: []\n',
      inventory_id: created[0],
    });
    for (const url of ['/v1/inventories', `/v1/inventories/${created[0]!}`, '/v1/runs']) {
      const read = await client.request('GET', url);
      expect({ url, status: read?.status, body: read?.body.slice(0, 300) }).toMatchObject({ status: 200 });
    }
    if (inv?.status === 201) created.push((JSON.parse(inv.body) as { id: string }).id);

    // Space returns: writes work again in the same process, runs too.
    fs.rmSync(filler);
    const after = await write();
    expect(after?.status).toBe(201);
    const run = await client.request('POST', '/v1/runs', {
      playbook: '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug: {msg: hello}\n',
      inventory_id: created[0],
    });
    expect(run?.status).toBe(201);
    expect(await finishedRun(s, token!, (JSON.parse(run!.body) as { id: string }).id)).toMatchObject({
      conclusion: 'succeeded',
    });

    expect(client.transportErrors).toEqual([]);
    expect(unexpectedAnswers(client.answers, 'storage-full')).toEqual([]);
    expect(s.output()).not.toContain('"unhandled error"');
    const listed = await call<Array<{ id: string }>>(s, token!, 'GET', '/v1/inventories?limit=500');
    expect(listed.body.map((i) => i.id).sort()).toEqual([...created].sort());

    // Stopped cleanly, the file passes SQLite's own check and holds exactly the acknowledged writes.
    expect((await s.stop()).code).toBe(0);
    server = undefined;
    const db = new SqliteDatabase(path.join(dataDir, 'baton.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const ids = (db.prepare('select id from inventories order by id').all() as Array<{ id: string }>).map(
        (r) => r.id,
      );
      expect(ids).toEqual([...created].sort());
    } finally {
      db.close();
    }
  }, 180_000);
});
