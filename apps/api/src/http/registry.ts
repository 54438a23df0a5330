import { unstorableTextReason } from '@baton/contracts';
import type { Principal } from '@baton/core';
import { ForbiddenError, UnauthenticatedError, ValidationError } from '@baton/core';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import { HttpError } from './problem.js';

export type Method = 'get' | 'post' | 'put' | 'delete';

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** defaults to application/json when a schema is given */
  contentType?: string;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Ctx<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** The signed-in caller; for public operations, an anonymous viewer with no grants. */
  principal: Principal;
  req: Request;
  res: Response;
}

export interface Operation<
  PS extends z.ZodType = z.ZodType,
  QS extends z.ZodType = z.ZodType,
  BS extends z.ZodType = z.ZodType,
> {
  operationId: string;
  method: Method;
  /** OpenAPI-style path; under /v1 unless `unversioned` */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth: 'public' | 'user';
  params?: PS;
  query?: QS;
  body?: BS;
  responses: Record<number, ResponseSpec>;
  /** Listed for earlier editions in the spec's Versioning section: also served without /v1, deprecated. */
  legacy?: boolean;
  /** Served at `path` as is (e.g. /healthz): no /v1 prefix. */
  unversioned?: boolean;
  /**
   * A read-scope token may call this POST: it changes nothing (POST /auth/check) or only ends the caller's own token
   * (POST /auth/logout). Every other POST, PUT and DELETE answers such a token 403; GETs change nothing.
   */
  allowReadScope?: boolean;
  handle(ctx: Ctx<z.output<PS>, z.output<QS>, z.output<BS>>): Promise<Reply | undefined> | Reply | undefined;
}

/** Identity function that makes TypeScript infer the handler's types from the schemas. */
export function defineOperation<
  PS extends z.ZodType = z.ZodType<Record<string, string>>,
  QS extends z.ZodType = z.ZodType<unknown>,
  BS extends z.ZodType = z.ZodType<unknown>,
>(op: Operation<PS, QS, BS>): Operation {
  return op as unknown as Operation;
}

export const API_PREFIX = '/v1';
/** RFC 9745 Deprecation date of the unprefixed editions: 2026-01-01T00:00:00Z. */
export const LEGACY_DEPRECATED_AT = 1767225600;

export function fullPath(op: Operation): string {
  return op.unversioned ? op.path : `${API_PREFIX}${op.path}`;
}

const ANONYMOUS: Principal = { id: 'anonymous', username: 'anonymous', role: 'viewer' };

function toExpressPath(openapiPath: string): string {
  return openapiPath.replace(/\{(\w+)\}/g, ':$1');
}

function issues(where: string, error: z.ZodError): ValidationError {
  const errors = error.issues.map((i) => ({ path: [where, ...i.path.map(String)].join('.'), message: i.message }));
  return new ValidationError(`invalid ${where}`, errors);
}

/** Deeper than any body Baton accepts; deeper input is refused before anything walks it recursively. */
const MAX_INPUT_DEPTH = 32;

/**
 * No input may carry a NUL character (PostgreSQL refuses it in text; a 500 if it got that far) or a string that
 * is not well-formed Unicode (stored as something other than what was sent). Neither has a legitimate use in
 * names, ids or filters. Checked once here, for every operation and every location, keys included,
 * iteratively and with a depth limit, so a pathologically nested body is a 400, not a stack overflow.
 */
function rejectBadInput(value: unknown, where: string): void {
  const bad: Array<{ path: string; message: string }> = [];
  const stack: Array<{ v: unknown; at: string; depth: number }> = [{ v: value, at: where, depth: 0 }];
  while (stack.length) {
    const { v, at, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const message = unstorableTextReason(v);
      if (message) bad.push({ path: at, message });
    } else if (v && typeof v === 'object') {
      if (depth >= MAX_INPUT_DEPTH)
        throw new ValidationError(`invalid ${where}`, [
          { path: at, message: `nested more than ${MAX_INPUT_DEPTH} levels deep` },
        ]);
      for (const [k, item] of Object.entries(v)) {
        // A bad key is reported at its object: the key itself cannot be echoed in a path.
        const keyMessage = unstorableTextReason(k);
        if (keyMessage) bad.push({ path: at, message: `a key ${keyMessage}` });
        else stack.push({ v: item, at: `${at}.${k}`, depth: depth + 1 });
      }
    }
  }
  if (bad.length)
    throw new ValidationError(
      `invalid ${where}`,
      bad.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    );
}

/**
 * The query string's percent-escapes must spell UTF-8: the query parser would silently put U+FFFD for bytes that
 * are not. A `%` not followed by two hex digits stays literal, as the parser takes it.
 */
function rejectNonUtf8Query(originalUrl: string): void {
  const q = originalUrl.indexOf('?');
  if (q < 0) return;
  const bad: Array<{ path: string; message: string }> = [];
  for (const pair of originalUrl.slice(q + 1).split('&')) {
    if (decodesAsUtf8(pair)) continue;
    const name = pair.split('=')[0]!;
    bad.push({
      path: decodesAsUtf8(name) ? `query.${decodeQueryPart(name)}` : 'query',
      message: 'must be percent-encoded UTF-8',
    });
  }
  if (bad.length) throw new ValidationError('invalid query', bad);
}

const LITERAL_PERCENT = /%(?![0-9A-Fa-f]{2})/g;

function decodeQueryPart(part: string): string {
  return decodeURIComponent(part.replace(/\+/g, ' ').replace(LITERAL_PERCENT, '%25'));
}

function decodesAsUtf8(part: string): boolean {
  try {
    decodeQueryPart(part);
    return true;
  } catch {
    return false;
  }
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export interface MountDeps {
  authenticate(token: string): Promise<{ principal: Principal }>;
}

function handlerFor(op: Operation, deps: MountDeps): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      let body: unknown;
      if (op.body) {
        if (hasBody(req) && !req.is(['application/json', 'application/*+json'])) {
          throw new HttpError(415, 'unsupported-media-type', 'send the body as application/json');
        }
        body = hasBody(req) ? req.body : undefined;
      }

      let principal = ANONYMOUS;
      if (op.auth === 'user') {
        const header = req.headers.authorization ?? '';
        const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(header);
        if (!match)
          throw new UnauthenticatedError(
            header ? 'malformed Authorization header; use "Bearer <token>"' : 'sign in first: no bearer token',
          );
        principal = (await deps.authenticate(match[1]!)).principal;
        res.locals.userId = principal.id;
        // Checked here, once for every operation, before the input is parsed: a read token changes nothing.
        if (principal.scope === 'read' && op.method !== 'get' && !op.allowReadScope)
          throw new ForbiddenError('this token has scope read: it cannot change anything');
      }

      const parse = <S extends z.ZodType | undefined>(schema: S, value: unknown, where: string) => {
        if (!schema) return value;
        rejectBadInput(value, where);
        const r = schema.safeParse(value);
        if (!r.success) throw issues(where, r.error);
        return r.data;
      };
      const params = parse(op.params, req.params, 'path');
      if (op.query) rejectNonUtf8Query(req.originalUrl);
      const query = parse(op.query, req.query, 'query');
      const parsedBody = op.body ? parse(op.body, body, 'body') : undefined;

      const reply = await op.handle({ params, query, body: parsedBody, principal, req, res });
      if (!reply || res.headersSent) return;
      // Link may already carry the successor of a legacy path: a page's rel="next" joins it, never replaces it.
      for (const [k, v] of Object.entries(reply.headers ?? {})) {
        if (k.toLowerCase() === 'link') res.append('Link', v);
        else res.setHeader(k, v);
      }
      if (reply.body === undefined) res.status(reply.status).end();
      else res.status(reply.status).json(reply.body);
    } catch (err) {
      next(err);
    }
  };
}

/** Marks a response from an unprefixed path as deprecated, pointing at the same resource under /v1. */
const deprecated: RequestHandler = (req, res, next) => {
  const url = new URL(req.originalUrl, 'http://x');
  res.setHeader('Deprecation', `@${LEGACY_DEPRECATED_AT}`);
  res.setHeader('Link', `<${API_PREFIX}${url.pathname}${url.search}>; rel="successor-version"`);
  next();
};

export function mountOperations(app: Express, ops: Operation[], deps: MountDeps): void {
  const methodsByPath = new Map<string, Set<string>>();
  for (const op of ops) {
    const paths = [toExpressPath(fullPath(op))];
    if (op.legacy) paths.push(toExpressPath(op.path));
    for (const [i, p] of paths.entries()) {
      const chain: RequestHandler[] = i === 1 ? [deprecated, handlerFor(op, deps)] : [handlerFor(op, deps)];
      app[op.method](p, ...chain);
      const set = methodsByPath.get(p) ?? new Set<string>();
      set.add(op.method.toUpperCase());
      methodsByPath.set(p, set);
    }
  }
  // A known path with a method it does not have: 405 with Allow, not a misleading 404.
  for (const [p, methods] of methodsByPath) {
    if (methods.has('GET')) methods.add('HEAD');
    const allow = [...methods].sort().join(', ');
    app.all(p, (req, _res, next) =>
      next(
        new HttpError(405, 'method-not-allowed', `${req.method} is not allowed here; allowed: ${allow}`, {
          Allow: allow,
        }),
      ),
    );
  }
}
