// Requests Node's HTTP parser refuses never reach Express: `baton serve` answers them from its clientError handler.
// Against the real server, listening on a port, with raw bytes on a socket (supertest would not get that far).
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, DIALECTS, type TestDatabase } from '@baton/db/testing';
import { loadConfig } from '../config/config.js';
import { serve } from '../server.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function parse(raw: Buffer): RawResponse {
  const [head = '', body = ''] = raw.toString('utf8').split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]), headers, body };
}

/** Sends `request` as is and reads until the server closes the connection. */
function rawRequest(port: number, request: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(parse(Buffer.concat(chunks))));
    socket.end(request);
  });
}

/**
 * Sends `request` and never ends this side of the connection (allowHalfOpen): resolves when the server has sent its
 * end, with the client socket still open, so the test can look at what the server kept.
 */
function rawRequestHeldOpen(port: number, request: string): Promise<{ response: RawResponse; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => resolve({ response: parse(Buffer.concat(chunks)), socket }));
    socket.write(request);
  });
}

function expectProblem(res: RawResponse, status: number, type: string): void {
  expect({ status: res.status, contentType: res.headers['content-type'], connection: res.headers.connection }).toEqual({
    status,
    contentType: 'application/problem+json',
    connection: 'close',
  });
  expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
  const body = JSON.parse(res.body);
  expect(body).toEqual({
    type,
    title: expect.any(String),
    status,
    detail: expect.any(String),
    request_id: expect.any(String),
  });
  // The id an operator quotes is the one in the header, as on every other answer.
  expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  expect(body.request_id).toBe(res.headers['x-request-id']);
}

describe.each(DIALECTS)('baton serve on %s answers requests the HTTP parser refuses', (dialect) => {
  let tdb: TestDatabase;
  let dataDir: string;
  let running: Awaited<ReturnType<typeof serve>>;
  let port: number;

  beforeAll(async () => {
    tdb = await createTestDatabase(dialect);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-client-error-'));
    const config = loadConfig({
      BATON_DATA_DIR: dataDir,
      BATON_DATABASE_URL: tdb.url,
      BATON_HOST: '127.0.0.1',
      BATON_PORT: '0',
      BATON_EXECUTORS: '0',
      BATON_SANDBOX: 'off',
      BATON_LOG_LEVEL: 'error',
    });
    running = await serve(config, { print: () => {} });
    port = (running.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await running?.stop();
    await tdb?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers a 20,000-character path or query with a 431 problem, not a bare status line', async () => {
    expectProblem(
      await rawRequest(port, `GET /v1/users/usr_${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
      431,
      'urn:baton:problem:headers-too-large',
    );
    expectProblem(
      await rawRequest(port, `GET /v1/users?cursor=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
      431,
      'urn:baton:problem:headers-too-large',
    );
    expectProblem(
      await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`),
      431,
      'urn:baton:problem:headers-too-large',
    );
  });

  it('closes the connection itself, even when the client holds its side open', async () => {
    const connections = () =>
      new Promise<number>((resolve, reject) =>
        running.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
      );
    for (const [request, status, type] of [
      [`GET /${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431, 'urn:baton:problem:headers-too-large'],
      ['NOT HTTP AT ALL\r\n\r\n', 400, 'urn:baton:problem:malformed-request'],
    ] as const) {
      const { response, socket } = await rawRequestHeldOpen(port, request);
      try {
        expectProblem(response, status, type);
        // Only ending its own side would leave the socket to a client that may never end its own.
        expect(await connections()).toBe(0);
      } finally {
        socket.destroy();
      }
    }
  });

  it('answers bytes that are not HTTP with a 400 problem', async () => {
    expectProblem(await rawRequest(port, 'NOT HTTP AT ALL\r\n\r\n'), 400, 'urn:baton:problem:malformed-request');
    expectProblem(
      await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n'),
      400,
      'urn:baton:problem:malformed-request',
    );
  });

  it('still serves a request of ordinary size on the same server', async () => {
    const ok = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ status: 'ok' });
  });
});
