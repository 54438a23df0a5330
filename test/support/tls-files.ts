// A throw-away self-signed certificate (its own CA) for 127.0.0.1 and localhost, made by openssl, for tests that
// start a TLS server (Redis, PostgreSQL) and must show that a client trusting it connects and one trusting another
// certificate is refused.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface CertificateFiles {
  /** the certificate, PEM: also the CA file a client trusts */
  cert: string;
  /** its private key, PEM, mode 0600 */
  key: string;
}

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
