// Imports take bodies up to 20 MiB, far above every other operation's limit. Only an admin's request is read with
// that limit: anyone else's falls through to the ordinary parser, so nobody without the right can make the server
// parse 20 MiB of JSON (the operation itself still authenticates and answers 403).
import { MAX_IMPORT_BYTES } from '@baton/contracts';
import type { Principal } from '@baton/core';
import type { RequestHandler } from 'express';
import { jsonBody } from '../http/json-body.js';

export function importBodyParser(authenticate: (token: string) => Promise<{ principal: Principal }>): RequestHandler {
  const parse = jsonBody(MAX_IMPORT_BYTES);
  return (req, res, next) => {
    const token = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (req.method !== 'POST' || token === undefined) return next();
    authenticate(token).then(
      ({ principal }) => (principal.role === 'admin' ? parse(req, res, next) : next()),
      () => next(),
    );
  };
}
