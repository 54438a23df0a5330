// Test support: an HTTPS server on 127.0.0.1 with a throw-away self-signed certificate, for url inventory sources.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface HttpsRoute {
  status?: number;
  body: string;
  headers?: Record<string, string>;
}

export interface TestHttpsServer {
  /** https://127.0.0.1:<port> */
  origin: string;
  /** the certificate to trust (PEM) */
  ca: string;
  /** what GET <path> answers; unknown paths answer 404 */
  routes: Map<string, HttpsRoute>;
  /** the Authorization header of every request, in order */
  authorizations: Array<string | undefined>;
  close(): Promise<void>;
}

export async function startHttpsServer(): Promise<TestHttpsServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-https-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  const ca = fs.readFileSync(cert, 'utf8');
  const routes = new Map<string, HttpsRoute>();
  const authorizations: Array<string | undefined> = [];
  const server = https.createServer({ key: fs.readFileSync(key), cert: ca }, (req, res) => {
    authorizations.push(req.headers.authorization);
    const route = routes.get(req.url ?? '');
    res.writeHead(route?.status ?? (route ? 200 : 404), { 'content-type': 'application/json', ...route?.headers });
    res.end(route?.body ?? '{"error":"no such route"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    origin: `https://127.0.0.1:${port}`,
    ca,
    routes,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        fs.rmSync(dir, { recursive: true, force: true });
      }),
  };
}
