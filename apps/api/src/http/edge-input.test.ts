// What the HTTP edge refuses before any service sees it: text that is not well-formed Unicode (in bodies, keys and
// queries), body bytes that are not UTF-8, numbers that are not decimal integers, and cursors that do not decode.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { createRepo, tempDir } from '@baton/executor/testing';
import type { Response } from 'supertest';
import { z } from 'zod';
import { bearer, createHarness, type Harness } from '../testing/harness.js';
import { fullPath } from './registry.js';

const NOT_UNICODE = 'must be well-formed Unicode (a lone UTF-16 surrogate is not)';

/** A 400 problem+json whose field errors are exactly these. */
function badRequest(res: Response, errors: Array<{ path: string; message: string }>): void {
  expect({ status: res.status, type: res.headers['content-type'] }).toEqual({
    status: 400,
    type: expect.stringMatching(/^application\/problem\+json/),
  });
  expect(res.body).toMatchObject({ status: 400, type: 'urn:baton:problem:validation-error', errors });
}

describe.each(DIALECTS)('the HTTP edge on %s', (dialect) => {
  let h: Harness;
  let admin: Record<string, string>;
  const ids: Record<string, string> = {};
  let n = 0;
  const uniq = (stem: string) => `${stem}-${++n}-${Date.now().toString(36)}`;
  const root = tempDir(`baton-edge-${dialect}`);
  const repo = createRepo(root);
  // As given: supertest would serialize a Buffer to JSON ({"type":"Buffer","data":[…]}) for a JSON content type.
  const json = (method: 'post' | 'put', url: string, raw: string | Buffer, type = 'application/json') =>
    h.http[method](url)
      .set(admin)
      .set('Content-Type', type)
      .serialize((b: unknown) => b as string)
      .send(raw);

  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = bearer(h.admin.token);
    const made = async (url: string, body: object) => {
      const res = await h.http.post(url).set(admin).send(body);
      if (res.status !== 201) throw new Error(`seeding ${url}: ${res.status} ${res.text}`);
      return res.body.id as string;
    };
    ids.team = await made('/v1/teams', { name: uniq('team') });
    ids.cred = await made('/v1/credentials', { name: uniq('cred'), type: 'token', inputs: { token: 't0ken' } });
    ids.prj = await made('/v1/projects', { name: uniq('prj'), git_url: repo.url });
    ids.inv = await made('/v1/inventories', {
      name: uniq('inv'),
      content: 'web-1.example.com\nweb_2.example.com\ndb.example.com\n',
    });
    ids.run = await made('/v1/runs', {
      playbook: '- hosts: all\n  gather_facts: false\n  tasks: []\n',
      inventory_id: ids.inv,
    });
  });
  afterAll(async () => {
    await h?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  describe('text that is not well-formed Unicode', () => {
    it('is refused in bodies at the field, keys included, on create and update, and nothing is stored', async () => {
      // The raw JSON text carries the escape: a lone surrogate only exists once JSON.parse has read it.
      badRequest(await json('post', '/v1/teams', '{"name":"\\ud800x"}'), [{ path: 'body.name', message: NOT_UNICODE }]);
      badRequest(await json('post', '/teams', '{"name":"x\\udfff"}'), [{ path: 'body.name', message: NOT_UNICODE }]);
      badRequest(await json('put', `/v1/credentials/${ids.cred}`, '{"name":"a\\udc00b"}'), [
        { path: 'body.name', message: NOT_UNICODE },
      ]);
      badRequest(await json('put', `/v1/credentials/${ids.cred}`, '{"inputs":{"token":"\\udbff"}}'), [
        { path: 'body.inputs.token', message: NOT_UNICODE },
      ]);
      badRequest(await json('put', `/v1/projects/${ids.prj}`, '{"name":"\\ude00\\ud83d"}'), [
        { path: 'body.name', message: NOT_UNICODE },
      ]);
      badRequest(await json('put', `/v1/projects/${ids.prj}`, '{"branch":"main","name":"ok","x":["\\ud800"]}'), [
        { path: 'body.x.0', message: NOT_UNICODE },
      ]);
      // A key is reported at its object: the key itself cannot be spelled in a path.
      badRequest(await json('post', '/v1/teams', '{"name":"ok","\\ud800":1}'), [
        { path: 'body', message: `a key ${NOT_UNICODE}` },
      ]);

      const teams = await h.http.get('/v1/teams?limit=500').set(admin);
      expect(
        teams.body.map((t: { name: string }) => t.name).filter((name: string) => /\uFFFD|\p{Surrogate}/u.test(name)),
      ).toEqual([]);
      const audit = await h.http.get('/v1/audit/verify').set(admin);
      expect(audit.body).toMatchObject({ ok: true });
    });

    it('takes a surrogate pair, escaped or not: that is well-formed', async () => {
      const escaped = await json('post', '/v1/teams', '{"name":"smile \\ud83d\\ude00"}');
      expect(escaped.status).toBe(201);
      expect(escaped.body.name).toBe('smile 😀');
      const raw = await json('put', `/v1/projects/${ids.prj}`, JSON.stringify({ name: 'prj 😀 ünï' }));
      expect({ status: raw.status, name: raw.body.name }).toEqual({ status: 200, name: 'prj 😀 ünï' });
    });

    it('is refused in a query when its percent-escapes are not UTF-8, at the parameter', async () => {
      for (const bad of ['%ED%A0%80', '%FF', 'a%C3', '%C0%AF']) {
        badRequest(await h.http.get(`/v1/audit?actor=${bad}`).set(admin), [
          { path: 'query.actor', message: 'must be percent-encoded UTF-8' },
        ]);
      }
      // Well-formed escapes and a literal % are taken as the query parser reads them.
      for (const fine of ['%C3%BC', '%F0%9F%98%80', '100%', '%zz']) {
        expect({ fine, status: (await h.http.get(`/v1/audit?actor=${fine}`).set(admin)).status }).toEqual({
          fine,
          status: 200,
        });
      }
    });
  });

  describe('a JSON body whose bytes are not UTF-8', () => {
    const body = (bytes: number[]) => Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('"}')]);

    it('is a 400 problem, not a silent U+FFFD', async () => {
      const cases: Array<[string, number[]]> = [
        ['stray bytes', [0x61, 0xff, 0xfe]],
        ['a truncated sequence', [0x61, 0xc3]],
        ['an over-long encoding', [0xc0, 0xaf]],
        ['a surrogate encoded as UTF-8', [0xed, 0xa0, 0x80]],
      ];
      for (const [what, bytes] of cases) {
        const res = await json('post', '/v1/teams', body(bytes));
        expect({ what, status: res.status, type: res.headers['content-type'] }).toEqual({
          what,
          status: 400,
          type: expect.stringMatching(/^application\/problem\+json/),
        });
        expect(res.body).toMatchObject({
          status: 400,
          type: 'urn:baton:problem:malformed-body',
          detail: 'request body is not valid UTF-8',
        });
        badRequestNotStored(await h.http.get('/v1/teams?limit=500').set(admin));
      }
      const put = await json('put', `/v1/credentials/${ids.cred}`, body([0xff]));
      expect({ status: put.status, type: put.body.type }).toEqual({
        status: 400,
        type: 'urn:baton:problem:malformed-body',
      });
    });

    it('takes UTF-8, with or without charset=utf-8, and refuses another charset with 415', async () => {
      const utf8 = await json('post', '/v1/teams', body([...Buffer.from('ünï-1')]));
      expect({ status: utf8.status, name: utf8.body.name }).toEqual({ status: 201, name: 'ünï-1' });
      const declared = await json(
        'post',
        '/v1/teams',
        body([...Buffer.from('ünï-2')]),
        'application/json; charset=UTF-8',
      );
      expect(declared.status).toBe(201);
      const utf16 = await json(
        'post',
        '/v1/teams',
        Buffer.from('{"name":"utf16"}', 'utf16le'),
        'application/json; charset=utf-16le',
      );
      expect({ status: utf16.status, type: utf16.body.type }).toEqual({
        status: 415,
        type: 'urn:baton:problem:unsupported-charset',
      });
    });

    function badRequestNotStored(teams: Response): void {
      expect(teams.body.map((t: { name: string }) => t.name).filter((name: string) => name.includes('\uFFFD'))).toEqual(
        [],
      );
    }
  });

  describe('numbers in a query', () => {
    it('takes only decimal integers in range for limit, on every list', async () => {
      const lists = ['/v1/users', '/v1/audit', '/v1/runs', `/v1/inventories/${ids.inv}/hosts`];
      for (const list of lists) {
        for (const bad of [
          '0x10',
          '1e3',
          '1e1',
          '+5',
          '-1',
          '1.0',
          '1.5',
          '%205',
          '5%20',
          '',
          'Infinity',
          '0',
          '501',
          '9'.repeat(400),
        ]) {
          const res = await h.http.get(`${list}?limit=${bad}`).set(admin);
          expect({ list, bad, status: res.status }).toEqual({ list, bad, status: 400 });
          expect(res.body.errors).toEqual([
            { path: 'query.limit', message: 'must be a decimal integer from 1 to 500' },
          ]);
        }
        for (const good of ['1', '007', '500'])
          expect({ list, good, status: (await h.http.get(`${list}?limit=${good}`).set(admin)).status }).toEqual({
            list,
            good,
            status: 200,
          });
      }
    });

    it('takes only decimal integers for run events and log lines', async () => {
      for (const q of ['limit=1e3', 'limit=0x10', 'after_seq=0x1', 'after_seq=1e2', 'after_seq=', 'after_seq=-1']) {
        const res = await h.http.get(`/v1/runs/${ids.run}/events?${q}`).set(admin);
        expect({ q, status: res.status }).toEqual({ q, status: 400 });
      }
      for (const q of ['offset=0x1', 'offset=%20', 'limit=1e2', 'limit=']) {
        const res = await h.http.get(`/v1/runs/${ids.run}/logs?${q}`).set(admin);
        expect({ q, status: res.status }).toEqual({ q, status: 400 });
      }
      expect((await h.http.get(`/v1/runs/${ids.run}/events?after_seq=0&limit=10`).set(admin)).status).toBe(200);
      expect((await h.http.get(`/v1/runs/${ids.run}/logs?offset=0&limit=10`).set(admin)).status).toBe(200);
    });
  });

  describe('cursors', () => {
    /** Every paged list the app serves: a GET whose query takes a cursor, found from the operations themselves. */
    const pagedLists = () =>
      h.operations
        .filter((op) => op.method === 'get' && op.query instanceof z.ZodObject && 'cursor' in op.query.shape)
        .map((op) => fullPath(op).replace('{id}', op.path.startsWith('/teams') ? ids.team! : ids.inv!));

    it('covers every list', () => {
      expect(pagedLists().sort()).toEqual(
        [
          '/v1/audit',
          '/v1/credentials',
          '/v1/drift',
          '/v1/drift/unassessed',
          '/v1/fleet',
          '/v1/hosts/{host}/runs',
          '/v1/tasks',
          '/v1/grants',
          '/v1/inventories',
          `/v1/inventories/${ids.inv}/hosts`,
          '/v1/inventory-sources',
          '/v1/notifiers',
          '/v1/policies',
          '/v1/projects',
          '/v1/runs',
          '/v1/schedules',
          '/v1/teams',
          `/v1/teams/${ids.team}/members`,
          '/v1/templates',
          '/v1/tokens',
          '/v1/triggers',
          '/v1/users',
        ].sort(),
      );
    });

    it.each([
      ['garbage', 'base64url letters with stray bits'],
      ['abc', 'canonical base64url of bytes that are not UTF-8'],
      ['a', 'a length no base64 has'],
      ['YWJj=', 'padding'],
      ['YW%20Jj', 'a space'],
      ['not-a-cursor!', 'a character outside base64url'],
      ['%00', 'NUL'],
      ['%FF', 'a byte that is not UTF-8'],
      ['', 'nothing'],
    ])('answers the cursor %j (%s) with 400 at query.cursor on every list', async (cursor) => {
      for (const list of pagedLists()) {
        const res = await h.http.get(`${list}?cursor=${cursor}`).set(admin);
        expect({ list, status: res.status, type: res.body.type }).toEqual({
          list,
          status: 400,
          type: 'urn:baton:problem:validation-error',
        });
        expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'query.cursor' })]));
      }
    });

    it('still pages on with the cursors it issues, host names with dots included', async () => {
      const names: string[] = [];
      let url: string | undefined = `/v1/inventories/${ids.inv}/hosts?limit=1`;
      while (url) {
        const res: Response = await h.http.get(url).set(admin);
        expect(res.status).toBe(200);
        names.push(...res.body.map((x: { name: string }) => x.name));
        url = /<([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
      }
      expect(names).toEqual(['db.example.com', 'web-1.example.com', 'web_2.example.com']);
    });
  });
});
