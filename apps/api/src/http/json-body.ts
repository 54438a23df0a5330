import type { IncomingMessage } from 'node:http';
import { decodeUtf8Strictly } from '@baton/contracts';
import express, { type RequestHandler } from 'express';
import { HttpError } from './problem.js';

/**
 * body-parser's `verify` hook, run on the raw bytes before parsing. JSON between systems is UTF-8 (RFC 8259 §8.1),
 * and the parser would replace bytes that are not UTF-8 with U+FFFD without a word: both are refused instead.
 * body-parser passes a thrown error on with its own `status` (here 400 or 415) to the error handler.
 */
export function verifyUtf8Body(_req: IncomingMessage, _res: unknown, body: Buffer, charset: string | null): void {
  if (charset !== null && charset !== 'utf-8' && charset !== 'utf8') {
    throw new HttpError(415, 'unsupported-charset', `send the JSON body as UTF-8, not ${charset}`);
  }
  if (decodeUtf8Strictly(body) === undefined)
    throw new HttpError(400, 'malformed-body', 'request body is not valid UTF-8');
}

/** JSON bodies up to `limit` bytes, as application/json or application/*+json, in UTF-8 only. */
export function jsonBody(limit: number): RequestHandler {
  return express.json({ limit, type: ['application/json', 'application/*+json'], verify: verifyUtf8Body });
}
