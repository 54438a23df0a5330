// The HTTP transports against local servers: redirects are never followed, answers are read only up to the excerpt
// limit, and which answers are worth another attempt.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_RESPONSE_EXCERPT } from '@baton/contracts';
import type { NotificationMessage } from '@baton/core';
import { createNotifyTransport } from './transport.js';

const MESSAGE: NotificationMessage = { event: 'test', at: '2026-11-27T00:00:00.000Z', run: null, summary: 'hello' };

describe('notification transports over HTTP', () => {
  let server: http.Server;
  let base: string;
  const hits: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/moved') return void res.writeHead(302, { Location: '/elsewhere' }).end();
      if (req.url === '/missing') return void res.writeHead(404).end('no such hook');
      if (req.url === '/busy') return void res.writeHead(429).end('slow down');
      if (req.url === '/huge') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('x'.repeat(5 * 1024 * 1024));
        return;
      }
      res.writeHead(200).end('fine');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const send = (path: string) =>
    createNotifyTransport({ allowPrivate: true })(
      { kind: 'webhook', config: { url: `${base}${path}` }, secrets: { secret: 's' } },
      MESSAGE,
      { deliveryId: 'dlv_t' },
    );

  it('does not follow a redirect, and does not try again', async () => {
    const before = hits.length;
    expect(await send('/moved')).toMatchObject({
      ok: false,
      code: 302,
      retry: false,
      error: expect.stringContaining('redirects'),
    });
    expect(hits.slice(before)).toEqual(['/moved']);
  });

  it('keeps at most the excerpt limit of a huge answer', async () => {
    const r = await send('/huge');
    expect(r.ok).toBe(true);
    expect(r.excerpt!.length).toBeLessThanOrEqual(MAX_RESPONSE_EXCERPT);
    expect(r.excerpt!.length).toBeGreaterThan(0);
  });

  it('retries 429 but not 404', async () => {
    expect(await send('/busy')).toMatchObject({ ok: false, code: 429, retry: true, excerpt: 'slow down' });
    expect(await send('/missing')).toMatchObject({ ok: false, code: 404, retry: false });
  });
});
