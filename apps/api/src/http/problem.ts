import {
  AiNotConfiguredError,
  AiProviderError,
  type BatonError,
  ConflictError,
  UnprocessableError,
  ForbiddenError,
  InventoryRefreshError,
  NotFoundError,
  RateLimitedError,
  UnauthenticatedError,
  UnavailableError,
  ValidationError,
} from '@baton/core';
import { jsonSyntaxWhere } from './json-syntax.js';
import type { ProblemDetails } from '@baton/contracts';
import { databaseOutage } from '@baton/db';
import { RedisUnavailableError } from '@baton/queue';
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'winston';
import { redactPath } from './middleware.js';

/** Failures that only exist at the HTTP layer. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly slug: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

// The one map from error class to HTTP status.
const DOMAIN_STATUS: Array<[abstract new (...a: never[]) => BatonError, number, string]> = [
  [ValidationError, 400, 'validation-error'],
  [UnauthenticatedError, 401, 'unauthenticated'],
  [ForbiddenError, 403, 'forbidden'],
  [NotFoundError, 404, 'not-found'],
  [ConflictError, 409, 'conflict'],
  [UnprocessableError, 422, 'unprocessable'],
  // The source's own failure (recorded as its last_error): the request was fine, the source was not.
  [InventoryRefreshError, 422, 'inventory-refresh-failed'],
  [RateLimitedError, 429, 'rate-limited'],
  [AiNotConfiguredError, 503, 'ai-not-configured'],
  [UnavailableError, 503, 'unavailable'],
  [AiProviderError, 502, 'ai-provider-error'],
];

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  422: 'Unprocessable Content',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

// body-parser marks its errors with a `type`; these are the client's fault, never a 500.
const BODY_PARSER: Record<string, [number, string, string]> = {
  'entity.too.large': [413, 'body-too-large', 'request body is too large'],
  'entity.parse.failed': [400, 'malformed-json', 'request body is not valid JSON'],
  'entity.verify.failed': [400, 'malformed-body', 'request body failed verification'],
  'request.aborted': [400, 'request-aborted', 'request was aborted'],
  'request.size.invalid': [400, 'malformed-body', 'request size did not match Content-Length'],
  'charset.unsupported': [415, 'unsupported-charset', 'unsupported charset'],
  'encoding.unsupported': [415, 'unsupported-encoding', 'unsupported content encoding'],
  'stream.encoding.set': [500, 'internal', 'internal error'],
};

export function sendProblem(
  res: Response,
  status: number,
  slug: string,
  detail: string,
  extra: Partial<ProblemDetails> = {},
): void {
  const body: ProblemDetails = {
    type: `urn:baton:problem:${slug}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    ...(res.locals.requestId ? { request_id: String(res.locals.requestId) } : {}),
    ...extra,
  };
  res.status(status).type('application/problem+json').send(JSON.stringify(body));
}

function clientErrorStatus(err: unknown): number | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const { status, statusCode } = err as { status?: unknown; statusCode?: unknown };
  const code = typeof status === 'number' ? status : statusCode;
  return typeof code === 'number' && Number.isInteger(code) && code >= 400 && code < 500 ? code : undefined;
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    for (const [cls, status, slug] of DOMAIN_STATUS) {
      if (err instanceof cls) {
        if (err instanceof RateLimitedError) res.setHeader('Retry-After', String(err.retryAfterSeconds));
        if (err instanceof UnauthenticatedError) res.setHeader('WWW-Authenticate', 'Bearer');
        const extra =
          (err instanceof ValidationError || err instanceof UnprocessableError) && err.errors.length
            ? { errors: err.errors }
            : err instanceof AiProviderError
              ? { provider_status: err.providerStatus }
              : err instanceof RateLimitedError
                ? // the same wait as Retry-After, for clients that cannot read headers (the UI's fetch wrapper)
                  { retry_after: err.retryAfterSeconds }
                : {};
        sendProblem(res, status, slug, err.message, extra);
        return;
      }
    }
    // Queue mode's Redis away (enqueue, cancel, live events): the caller may try again. Its message names internal
    // addresses, so the client gets a fixed one.
    if (err instanceof RedisUnavailableError) {
      sendProblem(res, 503, 'unavailable', 'the run queue (Redis) is unreachable; try again');
      return;
    }
    // The database away (PostgreSQL restarting, a socket cut) or its disk full: not the request's fault, and it may
    // pass. The driver's message names internal addresses or paths, so the client gets a fixed one.
    const outage = databaseOutage(err);
    if (outage !== undefined) {
      logger.warn('database outage', {
        request_id: res.locals.requestId,
        path: redactPath(req.path),
        outage,
        error: err instanceof Error ? err.message : String(err),
      });
      res.setHeader('Retry-After', '5');
      if (outage === 'storage_full')
        sendProblem(res, 503, 'storage-full', 'the database storage is full; writes fail until space is freed');
      else sendProblem(res, 503, 'database-unavailable', 'the database is unreachable; try again');
      return;
    }
    if (err instanceof HttpError) {
      for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
      sendProblem(res, err.status, err.slug, err.message);
      return;
    }
    const parserType = (err as { type?: string } | null)?.type;
    const known = parserType ? BODY_PARSER[parserType] : undefined;
    if (parserType === 'entity.parse.failed') {
      // The first problem's place, so a long document (an import) can be fixed without guessing.
      const where = jsonSyntaxWhere(err);
      const detail = where ? `${known![2]}: the first error is at ${where}` : known![2];
      sendProblem(res, 400, known![1], detail, { errors: [{ path: 'body', message: detail }] });
      return;
    }
    if (known && known[0] < 500) {
      sendProblem(res, known[0], known[1], known[2]);
      return;
    }
    // Other client errors raised by Express itself (a path parameter that is not valid percent-encoding,
    // http-errors from static files…) carry a 4xx status: the client's fault, never a 500.
    const clientStatus = clientErrorStatus(err);
    if (clientStatus !== undefined) {
      if (err instanceof URIError)
        sendProblem(res, clientStatus, 'malformed-path', 'the request path is not valid percent-encoding');
      else {
        const expose = (err as { expose?: boolean }).expose === true && err instanceof Error && err.message;
        sendProblem(res, clientStatus, 'bad-request', expose ? err.message : (TITLES[clientStatus] ?? 'bad request'));
      }
      return;
    }
    logger.error('unhandled error', {
      request_id: res.locals.requestId,
      path: redactPath(req.path),
      error: err instanceof Error ? err.stack : String(err),
    });
    sendProblem(res, 500, 'internal', 'internal error; the request id is in the server log');
  };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  sendProblem(res, 404, 'no-such-route', `no route for ${req.method} ${redactPath(req.path)}`);
};
