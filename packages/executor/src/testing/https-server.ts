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

export interface CertificateFiles {
  /** the certificate, PEM: also the CA file a client trusts */
  cert: string;
  /** its private key, PEM, mode 0600 */
  key: string;
}

/**
 * A throw-away self-signed certificate (its own CA) for 127.0.0.1 and localhost, made by openssl: for tests that start
 * a TLS server (HTTPS, Redis, PostgreSQL) and show that a client trusting it connects and one trusting another is refused.
 */
export function selfSignedCertificate(dir: string, name: string): CertificateFiles {
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
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
      `/CN=${name}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  fs.chmodSync(key, 0o600);
  return { cert, key };
}

export async function startHttpsServer(): Promise<TestHttpsServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-https-'));
  const { key, cert } = selfSignedCertificate(dir, '127.0.0.1');
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
