// The one error → status map: each named error class a service or seam throws answers its status and problem type
// wherever it is thrown, with no route catching it by hand.
import { describe, expect, it } from '@jest/globals';
import {
  ConflictError,
  ForbiddenError,
  InventoryRefreshError,
  NotFoundError,
  RateLimitedError,
  RunInputMissingError,
  UnauthenticatedError,
  UnavailableError,
  UnprocessableError,
  ValidationError,
} from '@baton/core';
import type { InventorySourceRow } from '@baton/db';
import { RedisUnavailableError } from '@baton/queue';
import express from 'express';
import request from 'supertest';
import { createLogger } from '../logger.js';
import { errorHandler } from './problem.js';

/** An app whose only route throws `err`, behind the real error handler. */
function throwing(err: unknown) {
  const app = express();
  app.get('/boom', () => {
    throw err;
  });
  app.use(errorHandler(createLogger('error', { silent: true })));
  return app;
}

const source = { id: 'src_01ARZ3NDEKTSV4RRFFQ69G5FAV' } as InventorySourceRow;

describe('the error → status map', () => {
  it.each<[string, Error, number, string, string]>([
    ['ValidationError', new ValidationError('bad field'), 400, 'validation-error', 'bad field'],
    ['UnauthenticatedError', new UnauthenticatedError('no token'), 401, 'unauthenticated', 'no token'],
    ['ForbiddenError', new ForbiddenError('this needs the admin role'), 403, 'forbidden', 'this needs the admin role'],
    ['NotFoundError', new NotFoundError('run x not found'), 404, 'not-found', 'run x not found'],
    ['ConflictError', new ConflictError('in use'), 409, 'conflict', 'in use'],
    ['UnprocessableError', new UnprocessableError('git said no'), 422, 'unprocessable', 'git said no'],
    ['RunInputMissingError', new RunInputMissingError('inventory gone'), 422, 'unprocessable', 'inventory gone'],
    [
      'InventoryRefreshError',
      new InventoryRefreshError('example.test answered HTTP 503', source),
      422,
      'inventory-refresh-failed',
      'example.test answered HTTP 503',
    ],
    ['RateLimitedError', new RateLimitedError('slow down', 7), 429, 'rate-limited', 'slow down'],
    ['UnavailableError', new UnavailableError('database away'), 503, 'unavailable', 'database away'],
    // Its message names internal addresses: the client gets a fixed one.
    [
      'RedisUnavailableError',
      new RedisUnavailableError('connect ECONNREFUSED 10.0.0.5:6379'),
      503,
      'unavailable',
      'the run queue (Redis) is unreachable; try again',
    ],
  ])('answers a %s thrown anywhere with its status and problem type', async (_name, err, status, slug, detail) => {
    const res = await request(throwing(err)).get('/boom');
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status, type: `urn:baton:problem:${slug}`, detail });
  });

  it('answers anything it does not know 500, without its message', async () => {
    const res = await request(throwing(new Error('secret internals'))).get('/boom');
    expect(res.status).toBe(500);
    expect(res.body.detail).not.toContain('secret internals');
  });
});
