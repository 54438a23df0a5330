// Tests that start a TLS server use the executor's testing kit's certificate maker (one openssl recipe).
export { selfSignedCertificate, type CertificateFiles } from '@baton/executor/testing';
