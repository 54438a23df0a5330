import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newId } from '@baton/core';
import { DIALECTS, testRunRow } from '@baton/db/testing';
import type { Response } from 'supertest';
import { bearer, createHarness, type Harness } from '../testing/harness.js';
import { API_PREFIX, fullPath, LEGACY_DEPRECATED_AT } from './registry.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Asserts an RFC 9457 problem with the given status, and returns its body. */
function problem(res: Response, status: number): Record<string, unknown> {
  expect({ status: res.status, text: res.status === status ? '' : res.text }).toEqual({ status, text: '' });
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(res.text) as Record<string, unknown>;
  expect(body).toEqual(
    expect.objectContaining({
      type: expect.stringMatching(/^urn:baton:problem:[a-z-]+$/),
      title: expect.any(String),
      status,
      detail: expect.any(String),
      request_id: res.headers['x-request-id'],
    }),
  );
  expect(String(body.title).length).toBeGreaterThan(0);
  expect(String(body.detail).length).toBeGreaterThan(0);
  return body;
}

/** Every `$ref` in a document, with the JSON path where it appears. */
function refsOf(
  node: unknown,
  at = '#',
  out: Array<{ at: string; ref: string }> = [],
): Array<{ at: string; ref: string }> {
  if (Array.isArray(node)) node.forEach((v, i) => refsOf(v, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push({ at, ref: v });
      else refsOf(v, `${at}/${k}`, out);
    }
  }
  return out;
}

function resolvePointer(doc: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!node || typeof node !== 'object' || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

interface OpenApiOperation {
  operationId: string;
  deprecated?: boolean;
  security: unknown;
  parameters: Array<{ name: string; in: string; required: boolean }>;
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
}
interface OpenApiDoc {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
}

/** The operation at path and method; fails the test when the document lacks it. */
function opAt(doc: OpenApiDoc, p: string, method: string): OpenApiOperation {
  const op = doc.paths[p]?.[method];
  if (!op) throw new Error(`the OpenAPI document has no ${method.toUpperCase()} ${p}`);
  return op;
}

describe.each(DIALECTS)('HTTP platform on %s', (dialect) => {
  let h: Harness;
  let small: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect);
    small = await createHarness(dialect, { bodyLimitBytes: 1024 });
  });
  afterAll(async () => {
    await h?.close();
    await small?.close();
  });

  describe('problem+json', () => {
    it('answers an unknown route with 404', async () => {
      for (const url of ['/nope', '/v1/nope', '/v1/users/x/y/z']) {
        const body = problem(await h.http.get(url).set(bearer(h.admin.token)), 404);
        expect(body.detail).toContain(url);
      }
      problem(await h.http.post('/v1/nope').send({ a: 1 }), 404);
    });

    it('answers malformed JSON with 400', async () => {
      const res = await h.http.post('/v1/auth/login').set('Content-Type', 'application/json').send('{"username": "a",');
      const body = problem(res, 400);
      expect(body.type).toBe('urn:baton:problem:malformed-json');
      // A JSON scalar where an object is expected is malformed for this API too.
      problem(await h.http.post('/v1/auth/login').set('Content-Type', 'application/json').send('"just a string"'), 400);
    });

    it('answers a body of the wrong media type with 415', async () => {
      const text = await h.http.post('/v1/auth/login').set('Content-Type', 'text/plain').send('username=a&password=b');
      expect(problem(text, 415).type).toBe('urn:baton:problem:unsupported-media-type');
      const form = await h.http
        .post('/v1/users')
        .set(bearer(h.admin.token))
        .type('form')
        .send({ username: 'formuser', role: 'viewer' });
      problem(form, 415);
      // Nothing was created through the wrong media type.
      const list = await h.http.get('/v1/users?limit=500').set(bearer(h.admin.token));
      expect(list.body.map((u: { username: string }) => u.username)).not.toContain('formuser');
    });

    it('answers a body over the limit with 413', async () => {
      const big = { username: 'a', password: 'x'.repeat(2000) };
      expect(problem(await small.http.post('/v1/auth/login').send(big), 413).type).toBe(
        'urn:baton:problem:body-too-large',
      );
      // The same body is only a validation error where the limit is the default.
      problem(await h.http.post('/v1/auth/login').send(big), 400);
      // Just under the limit is parsed normally (and fails sign-in, not size).
      problem(await small.http.post('/v1/auth/login').send({ username: 'nobody', password: 'y'.repeat(100) }), 401);
    });

    it('answers a wrong method on a known path with 405 and an Allow header', async () => {
      const cases: Array<[string, string, string]> = [
        ['post', '/healthz', 'GET, HEAD'],
        ['delete', '/v1/users', 'GET, HEAD, POST'],
        ['delete', '/users', 'GET, HEAD, POST'],
        ['patch', '/v1/users/usr_01JDQ6Z9X8K3V2M4N5P6Q7R8S9', 'DELETE, GET, HEAD, PUT'],
        ['get', '/v1/auth/login', 'POST'],
      ];
      for (const [method, url, allow] of cases) {
        const res = await (h.http as unknown as Record<string, (u: string) => ReturnType<Harness['http']['get']>>)[
          method
        ]!(url).set(bearer(h.admin.token));
        expect(problem(res, 405).type).toBe('urn:baton:problem:method-not-allowed');
        expect(res.headers.allow).toBe(allow);
      }
    });

    it('answers a repeated query parameter, a bad limit or an unknown parameter with 400 and field errors', async () => {
      for (const q of [
        'limit=1&limit=2',
        'cursor=a&cursor=b',
        'limit=0',
        'limit=501',
        'limit=abc',
        'limit=',
        'limit=1.5',
        'frobnicate=1',
      ]) {
        const body = problem(await h.http.get(`/v1/users?${q}`).set(bearer(h.admin.token)), 400);
        expect(body.type).toBe('urn:baton:problem:validation-error');
        expect((body.errors as unknown[]).length).toBeGreaterThan(0);
      }
      for (const q of ['since=yesterday', 'limit=1&limit=1', 'action=a&action=b']) {
        problem(await h.http.get(`/v1/audit?${q}`).set(bearer(h.admin.token)), 400);
      }
      // A valid limit is fine.
      expect((await h.http.get('/v1/users?limit=500').set(bearer(h.admin.token))).status).toBe(200);
    });

    it('answers a cursor that was never issued with 400, not 500', async () => {
      for (const url of [
        '/v1/users?cursor=garbage',
        '/v1/users?cursor=%00%01',
        '/v1/audit?cursor=not-a-cursor',
        '/v1/teams?cursor=zzz',
      ]) {
        const res = await h.http.get(url).set(bearer(h.admin.token));
        problem(res, 400);
      }
    });

    it('answers a NUL character anywhere in the input with 400 naming where, not a database error', async () => {
      const login = problem(
        await h.http.post('/v1/auth/login').send({ username: 'a\u0000b', password: 'whatever-password' }),
        400,
      );
      expect(login.errors).toEqual([{ path: 'body.username', message: 'must not contain NUL characters' }]);
      const filter = problem(await h.http.get('/v1/audit?actor=%00').set(bearer(h.admin.token)), 400);
      expect(filter.errors).toEqual([{ path: 'query.actor', message: 'must not contain NUL characters' }]);
      const team = problem(
        await h.http.post('/v1/teams').set(bearer(h.admin.token)).send({ name: 'ok\u0000team' }),
        400,
      );
      expect(team.errors).toEqual([{ path: 'body.name', message: 'must not contain NUL characters' }]);
      problem(await h.http.delete('/v1/users/usr_%00').set(bearer(h.admin.token)), 400);
    });

    it('answers a pathologically nested body with 400, not a stack overflow', async () => {
      const deep = `${'['.repeat(20000)}${']'.repeat(20000)}`;
      const res = await h.http
        .post('/v1/teams')
        .set(bearer(h.admin.token))
        .set('Content-Type', 'application/json')
        .send(deep);
      problem(res, 400);
      let tooDeep: unknown = 'z';
      for (let i = 0; i < 40; i++) tooDeep = [tooDeep];
      const nested = problem(
        await h.http.post('/v1/teams').set(bearer(h.admin.token)).send({ name: 'x', a: tooDeep }),
        400,
      );
      expect(JSON.stringify(nested.errors)).toContain('nested more than');
    });

    it('answers a path that cannot be percent-decoded with 400, not 500', async () => {
      problem(await h.http.get('/v1/users/%E0%A4%A').set(bearer(h.admin.token)), 400);
      problem(await h.http.get('/users/%ZZ').set(bearer(h.admin.token)), 400);
      problem(await h.http.get('/ui/%ZZ'), 400);
    });
  });

  describe('X-Request-Id', () => {
    it('generates one when the client sends none, and puts it in problems', async () => {
      const a = await h.http.get('/healthz');
      const b = await h.http.get('/healthz');
      expect(a.headers['x-request-id']).toMatch(UUID);
      expect(b.headers['x-request-id']).toMatch(UUID);
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
      const p = problem(await h.http.get('/v1/nope'), 404);
      expect(p.request_id).toMatch(UUID);
    });

    it('echoes a sane client id', async () => {
      const id = 'client-trace_01.abc:42';
      const res = await h.http.get('/v1/nope').set('X-Request-Id', id);
      expect(res.headers['x-request-id']).toBe(id);
      expect(problem(res, 404).request_id).toBe(id);
    });

    it('replaces a garbage client id', async () => {
      for (const garbage of [
        '<script>alert(1)</script>',
        'has spaces in it',
        'x'.repeat(129),
        'semi;colon',
        '"quoted"',
      ]) {
        const res = await h.http.get('/healthz').set('X-Request-Id', garbage);
        expect(res.headers['x-request-id']).toMatch(UUID);
      }
    });
  });

  describe('client address', () => {
    const fail = (x: Harness, xff: string) =>
      x.http
        .post('/v1/auth/login')
        .set('X-Forwarded-For', xff)
        .send({ username: `nobody-${Math.random()}`, password: 'wrong password' });

    it('behind a proxy, rate limits by the address the proxy saw, not by what the client wrote in X-Forwarded-For', async () => {
      const proxied = await createHarness(dialect, {
        trustProxy: true,
        throttle: { perUsername: 100, perAddress: 2, windowSeconds: 60 },
      });
      try {
        expect((await fail(proxied, 'spoof-1, 203.0.113.7')).status).toBe(401);
        expect((await fail(proxied, 'spoof-2, 203.0.113.7')).status).toBe(401);
        const third = await fail(proxied, 'spoof-3, 203.0.113.7');
        problem(third, 429);
        expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
        // Another client behind the same proxy is not locked out.
        expect((await fail(proxied, '203.0.113.8')).status).toBe(401);
      } finally {
        await proxied.close();
      }
    });

    it('without a proxy, ignores X-Forwarded-For altogether', async () => {
      const direct = await createHarness(dialect, { throttle: { perUsername: 100, perAddress: 2, windowSeconds: 60 } });
      try {
        expect((await fail(direct, '198.51.100.1')).status).toBe(401);
        expect((await fail(direct, '198.51.100.2')).status).toBe(401);
        problem(await fail(direct, '198.51.100.3'), 429);
      } finally {
        await direct.close();
      }
    });
  });

  describe('operations endpoints', () => {
    it('GET /healthz answers 200 {status: ok}, also to HEAD', async () => {
      const res = await h.http.get('/healthz');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
      expect((await h.http.head('/healthz')).status).toBe(200);
    });

    it('GET /readyz answers 200 while the database answers, and 503 problem once it is closed', async () => {
      const res = await h.http.get('/readyz');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ready' });

      const doomed = await createHarness(dialect);
      try {
        expect((await doomed.http.get('/readyz')).status).toBe(200);
        await doomed.tdb.db.close();
        const down = problem(await doomed.http.get('/readyz'), 503);
        expect(down.type).toBe('urn:baton:problem:unavailable');
        expect(down.detail).toBe('database unreachable');
        // Liveness does not depend on the database.
        expect((await doomed.http.get('/healthz')).status).toBe(200);
      } finally {
        await doomed.close();
      }
    });

    it('GET /metrics is Prometheus text with the request counter and the runs gauge, and no user counts', async () => {
      await h.http.get('/healthz');
      const res = await h.http.get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      const lines = res.text.split('\n');
      expect(res.text).not.toMatch(/^(# (HELP|TYPE) )?baton_users\b/m);
      expect(res.text).not.toContain('role=');
      expect(res.text).toContain('# TYPE baton_http_requests_total counter');
      expect(
        lines.some((l) =>
          /^baton_http_requests_total\{method="GET",route="\/healthz",status="200"\} [1-9]\d*$/.test(l),
        ),
      ).toBe(true);
      expect(lines.some((l) => /^baton_audit_entries \d+$/.test(l))).toBe(true);
      // The runs gauge counts what is stored: one more pending run shows as one more.
      const pendingBefore = (await h.tdb.db.repos.runs.countByStatus()).pending ?? 0;
      expect(lines).toContain(`baton_runs{status="pending"} ${pendingBefore}`);
      await h.tdb.db.repos.runs.insert(testRunRow(newId('run'), { submitted_by: h.admin.id }));
      expect((await h.http.get('/metrics')).text.split('\n')).toContain(
        `baton_runs{status="pending"} ${pendingBefore + 1}`,
      );
      expect(lines.some((l) => /^baton_runs\{status="finished"\} \d+$/.test(l))).toBe(true);
      // Metrics never carry raw unmatched paths (unbounded label values).
      await h.http.get('/v1/some-unknown-path-xyz');
      expect((await h.http.get('/metrics')).text).not.toContain('some-unknown-path-xyz');
    });
  });

  describe('web UI', () => {
    let uiDir: string;
    let emptyDir: string;
    let ui: Harness;
    let noUi: Harness;
    beforeAll(async () => {
      uiDir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-ui-'));
      fs.writeFileSync(
        path.join(uiDir, 'index.html'),
        '<!doctype html><title>Baton</title><div id="root">INDEX-MARKER</div>',
      );
      fs.mkdirSync(path.join(uiDir, 'assets'));
      fs.writeFileSync(path.join(uiDir, 'assets', 'app.js'), 'console.log("ASSET-MARKER");');
      fs.writeFileSync(path.join(uiDir, 'assets', 'index-Bx3_kQ9z.js'), 'console.log("HASHED-MARKER");');
      emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-ui-empty-'));
      ui = await createHarness(dialect, { uiDir });
      noUi = await createHarness(dialect, { uiDir: emptyDir });
    });
    afterAll(async () => {
      await ui?.close();
      await noUi?.close();
      fs.rmSync(uiDir, { recursive: true, force: true });
      fs.rmSync(emptyDir, { recursive: true, force: true });
    });

    it('redirects / and /ui to /ui/', async () => {
      const root = await h.http.get('/');
      expect([301, 302, 307, 308]).toContain(root.status);
      expect(root.headers.location).toBe('/ui/');
      const bare = await h.http.get('/ui');
      expect([301, 302, 307, 308]).toContain(bare.status);
      expect(bare.headers.location).toBe('/ui/');
    });

    it('serves the built web app (apps/web/dist) at /ui/, and its assets', async () => {
      const res = await h.http.get('/ui/');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('<div id="root">');
      const asset = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(res.text)?.[1];
      expect(asset).toBeDefined();
      const js = await h.http.get(asset!);
      expect(js.status).toBe(200);
      expect(js.headers['content-type']).toMatch(/javascript/);
    });

    it('serves index.html for client-side routes and the files that exist', async () => {
      const index = await ui.http.get('/ui/');
      expect(index.status).toBe(200);
      expect(index.text).toContain('INDEX-MARKER');
      for (const route of ['/ui/some/client/route', '/ui/runs/run_123', '/ui/index.html']) {
        const res = await ui.http.get(route);
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.text).toContain('INDEX-MARKER');
      }
      const asset = await ui.http.get('/ui/assets/app.js');
      expect(asset.status).toBe(200);
      expect(asset.text).toContain('ASSET-MARKER');
    });

    it('sends a strict CSP and the security headers on every /ui/ answer', async () => {
      for (const url of ['/ui/', '/ui/runs/run_1', '/ui/assets/index-Bx3_kQ9z.js', '/ui/assets/missing-Aa11Bb22.js']) {
        const res = await ui.http.get(url);
        const csp = String(res.headers['content-security-policy']);
        expect(csp).toContain("script-src 'self'");
        expect(csp).toContain("frame-ancestors 'none'");
        expect(csp).not.toContain('unsafe-inline');
        expect(csp).not.toContain('unsafe-eval');
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.headers['referrer-policy']).toBe('no-referrer');
      }
    });

    it('caches hashed assets for a year and revalidates index.html; a missing asset is a 404, not the page', async () => {
      const hashed = await ui.http.get('/ui/assets/index-Bx3_kQ9z.js');
      expect(hashed.status).toBe(200);
      expect(hashed.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      for (const url of ['/ui/', '/ui/index.html', '/ui/some/client/route']) {
        const res = await ui.http.get(url);
        expect(res.headers['cache-control']).toBe('no-cache');
      }
      // A name without a content hash may change under the same name: revalidated too.
      expect((await ui.http.get('/ui/assets/app.js')).headers['cache-control']).toBe('no-cache');
      const missing = await ui.http.get('/ui/assets/missing-Aa11Bb22.js');
      expect(missing.status).toBe(404);
      expect(missing.headers['content-type']).toMatch(/problem\+json/);
    });

    it('never serves files outside the UI directory', async () => {
      for (const url of [
        '/ui/..%2f..%2fpackage.json',
        '/ui/%2e%2e/%2e%2e/package.json',
        '/ui/..%5c..%5cpackage.json',
      ]) {
        const res = await ui.http.get(url);
        expect(res.status).toBeLessThan(500);
        expect(res.text).not.toContain('"name"');
      }
    });

    it("answers /favicon.ico with the UI's icon when it has one, else 204 (never a 404 in the browser console)", async () => {
      const none = await noUi.http.get('/favicon.ico');
      expect(none.status).toBe(204);
      fs.writeFileSync(path.join(uiDir, 'favicon.ico'), Buffer.from([0, 0, 1, 0]));
      const icon = await ui.http.get('/favicon.ico').buffer(true);
      expect(icon.status).toBe(200);
      expect(Buffer.from(icon.body as Buffer).equals(Buffer.from([0, 0, 1, 0]))).toBe(true);
    });

    it('answers 503 problem when the UI directory has no index.html', async () => {
      for (const url of ['/ui/', '/ui/some/client/route']) {
        expect(problem(await noUi.http.get(url), 503).type).toBe('urn:baton:problem:ui-not-built');
      }
    });
  });

  describe('OpenAPI and docs', () => {
    let doc: OpenApiDoc;
    beforeAll(async () => {
      const res = await h.http.get('/v1/openapi.json');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      doc = res.body as OpenApiDoc;
    });

    it('is OpenAPI 3.1.0 with the bearer scheme', () => {
      expect(doc.openapi).toBe('3.1.0');
      expect(doc.info).toMatchObject({ title: 'Baton', version: expect.any(String) });
      expect(doc.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer' });
    });

    it('describes every registered operation, and nothing else', () => {
      expect(h.operations.length).toBeGreaterThan(10);
      let expected = 0;
      for (const op of h.operations) {
        const current = opAt(doc, fullPath(op), op.method);
        expect(current.operationId).toBe(op.operationId);
        expect(current.deprecated).toBeUndefined();
        expected++;
        if (op.legacy) {
          const legacy = doc.paths[op.path]?.[op.method];
          expect({ op: op.operationId, legacy: legacy?.deprecated }).toEqual({ op: op.operationId, legacy: true });
          expected++;
        }
      }
      let described = 0;
      for (const item of Object.values(doc.paths))
        described += Object.keys(item).filter((k) => METHODS.includes(k)).length;
      expect(described).toBe(expected);
    });

    it('has unique operation ids, auth where the operation needs it, and every path parameter declared', () => {
      const ids = new Set<string>();
      for (const [p, item] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          expect(ids.has(op.operationId)).toBe(false);
          ids.add(op.operationId);
          const names = [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
          const declared = op.parameters.filter((x) => x.in === 'path');
          expect({ at: `${method} ${p}`, params: declared.map((x) => x.name).sort() }).toEqual({
            at: `${method} ${p}`,
            params: [...names].sort(),
          });
          for (const d of declared) expect(d.required).toBe(true);
          expect(op.responses.default?.content?.['application/problem+json']?.schema).toEqual({
            $ref: '#/components/schemas/Problem',
          });
        }
      }
      for (const op of h.operations) {
        const security = opAt(doc, fullPath(op), op.method).security;
        expect(security).toEqual(op.auth === 'user' ? [{ bearer: [] }] : []);
      }
    });

    it('resolves every $ref inside the document', () => {
      const refs = refsOf(doc);
      expect(refs.length).toBeGreaterThan(0);
      const unresolved = refs.filter((r) => resolvePointer(doc, r.ref) === undefined);
      expect(unresolved).toEqual([]);
      expect(doc.components.schemas.Problem).toBeDefined();
    });

    it('lists the legacy paths as deprecated and the /v1 paths as current', () => {
      expect(opAt(doc, '/users', 'get').deprecated).toBe(true);
      expect(opAt(doc, '/users', 'post').deprecated).toBe(true);
      expect(opAt(doc, '/auth/login', 'post').deprecated).toBe(true);
      expect(opAt(doc, '/audit', 'get').deprecated).toBe(true);
      expect(opAt(doc, '/v1/users', 'get').deprecated).toBeUndefined();
      expect(opAt(doc, '/v1/auth/login', 'post').deprecated).toBeUndefined();
      expect(opAt(doc, '/v1/audit', 'get').deprecated).toBeUndefined();
      for (const [p, item] of Object.entries(doc.paths)) {
        for (const op of Object.values(item)) {
          if (p.startsWith(`${API_PREFIX}/`)) expect(op.deprecated).toBeUndefined();
        }
      }
    });

    it('keeps the unversioned routes unversioned', () => {
      for (const p of ['/healthz', '/readyz', '/metrics']) {
        expect(opAt(doc, p, 'get').deprecated).toBeUndefined();
        expect(doc.paths[`/v1${p}`]).toBeUndefined();
      }
      expect(opAt(doc, '/v1/openapi.json', 'get').operationId).toBe('openapi');
      expect(doc.paths['/openapi.json']).toBeUndefined();
    });

    it('serves /v1/docs as HTML whose assets load and which reads /v1/openapi.json', async () => {
      const page = await h.http.get('/v1/docs');
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
      expect(assets.length).toBeGreaterThanOrEqual(3);
      let init = '';
      for (const a of assets) {
        const res = await h.http.get(a);
        expect({ a, status: res.status }).toEqual({ a, status: 200 });
        expect(res.text.length).toBeGreaterThan(0);
        if (a.endsWith('init.js')) init = res.text;
      }
      expect(init).toContain('/v1/openapi.json');
      // The referenced document itself loads without a token.
      expect((await h.http.get('/v1/openapi.json')).status).toBe(200);
    });
  });

  describe('legacy aliases', () => {
    it('serves GET /users like /v1/users, with Deprecation and a Link to the successor', async () => {
      const legacy = await h.http.get('/users').set(bearer(h.admin.token));
      const current = await h.http.get('/v1/users').set(bearer(h.admin.token));
      expect(legacy.status).toBe(200);
      expect(legacy.body).toEqual(current.body);
      expect(legacy.headers.deprecation).toBe(`@${LEGACY_DEPRECATED_AT}`);
      expect(legacy.headers.link).toBe('</v1/users>; rel="successor-version"');
      expect(current.headers.deprecation).toBeUndefined();
      expect(current.headers.link).toBeUndefined();
    });

    it('keeps the query string in the successor link', async () => {
      const legacy = await h.http.get('/users?limit=100').set(bearer(h.admin.token));
      expect(legacy.status).toBe(200);
      expect(legacy.headers.link).toBe('</v1/users?limit=100>; rel="successor-version"');
    });

    it('keeps both the successor link and the next-page link on a paged legacy list', async () => {
      await h.user('viewer');
      await h.user('viewer');
      const legacy = await h.http.get('/users?limit=1').set(bearer(h.admin.token));
      expect(legacy.status).toBe(200);
      expect(legacy.body).toHaveLength(1);
      const link = String(legacy.headers.link);
      expect(link).toContain('</v1/users?limit=1>; rel="successor-version"');
      const next = /<([^>]+)>; rel="next"/.exec(link)?.[1];
      expect(next).toBeDefined();
      const page2 = await h.http.get(next!).set(bearer(h.admin.token));
      expect(page2.status).toBe(200);
      expect(page2.body).toHaveLength(1);
      expect(page2.body[0].id).not.toBe(legacy.body[0].id);
      // The /v1 list has only its next link.
      const current = await h.http.get('/v1/users?limit=1').set(bearer(h.admin.token));
      expect(current.headers.link).toMatch(/^<\/v1\/users\?limit=1&cursor=[^>]+>; rel="next"$/);
    });

    it('marks legacy errors as deprecated too, and signs in through the legacy path', async () => {
      const unauth = await h.http.get('/users');
      problem(unauth, 401);
      expect(unauth.headers.deprecation).toBe(`@${LEGACY_DEPRECATED_AT}`);
      const u = await h.user('operator');
      const login = await h.http.post('/auth/login').send({ username: u.username, password: u.password });
      expect(login.status).toBe(200);
      expect(login.headers.link).toBe('</v1/auth/login>; rel="successor-version"');
      expect((await h.http.post('/v1/auth/check').set(bearer(login.body.token))).status).toBe(200);
    });
  });
});
