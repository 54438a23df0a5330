import crypto from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'winston';
import type { HttpMetrics } from '../system/metrics.js';

const CLIENT_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Every request gets an id (the caller's X-Request-Id when sane), echoed back and put in logs and problems. */
export const requestId: RequestHandler = (req, res, next) => {
  const given = req.header('x-request-id');
  const id = given && CLIENT_REQUEST_ID.test(given) ? given : crypto.randomUUID();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
};

/** A webhook's token is its address and its secret: logs and error answers show `/hooks/<redacted>` instead. */
export function redactPath(path: string): string {
  return path.replace(/(^|\/)hooks(?:\/|%2f)[^/]*/gi, '$1hooks/<redacted>');
}

/**
 * The path a request asked for, without its query string, whatever router it was mounted on: `req.path` loses a
 * router's mount point while the request is inside it, `originalUrl` keeps it.
 */
export function requestPath(originalUrl: string): string {
  const end = originalUrl.search(/[?#]/);
  return end < 0 ? originalUrl : originalUrl.slice(0, end);
}

/**
 * One log line per request. Only method, path (never the query string: it may carry cursors, tokens, or an OIDC
 * callback's `code` and `state`), status, duration, request id and user id: never headers or bodies (a SAML
 * response arrives as a form body at /auth/saml/acs).
 */
export function accessLog(logger: Logger, metrics: HttpMetrics): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const route = (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
      metrics.observe(req.method, route, res.statusCode, seconds);
      logger.info('request', {
        request_id: res.locals.requestId,
        method: req.method,
        path: redactPath(requestPath(req.originalUrl)),
        status: res.statusCode,
        ms: Math.round(seconds * 1000),
        ...(res.locals.userId ? { user: res.locals.userId } : {}),
      });
    });
    next();
  };
}
