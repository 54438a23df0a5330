// One POST of a notification: to the checked address only, no redirects, one overall deadline (a server that
// trickles cannot hold it), at most MAX_RESPONSE_EXCERPT characters of the answer read.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { MAX_RESPONSE_EXCERPT } from '@baton/contracts';
import type { AttemptResult } from '@baton/core';
import { checkedDestination, type Resolve } from './destination.js';

export interface PostOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  allowPrivate: boolean;
  timeoutMs: number;
  resolve?: Resolve | undefined;
  ca?: string | undefined;
  /** the URL is a secret (a Slack webhook): errors name only its host */
  secretUrl?: boolean;
}

/** 408, 429 and 5xx are worth another try; other answers say something that trying again will not change. */
const retryable = (status: number) => status === 408 || status === 429 || status >= 500;

export async function postNotification(o: PostOptions): Promise<AttemptResult> {
  let url: URL;
  try {
    url = new URL(o.url);
  } catch {
    return { ok: false, error: 'not a URL', retry: false };
  }
  const where = o.secretUrl ? url.host : `${url.host}${url.pathname}`;
  const dest = await checkedDestination(url.hostname, { allowPrivate: o.allowPrivate, resolve: o.resolve });
  if (!dest.ok) return { ok: false, error: dest.reason, retry: dest.retry };
  const target = dest.address;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const done = (r: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(r);
    };
    const send = url.protocol === 'https:' ? https.request : http.request;
    const req = send(url, {
      method: 'POST',
      headers: { ...o.headers, 'Content-Length': String(Buffer.byteLength(o.body)) },
      ca: o.ca,
      servername: net.isIP(url.hostname.replace(/^\[|\]$/g, '')) ? undefined : url.hostname,
      lookup: (_host, lookupOpts, cb) =>
        lookupOpts.all ? cb(null, [target]) : cb(null, target.address, target.family),
      agent: false,
    });
    const timer = setTimeout(
      () => done({ ok: false, error: `no answer from ${where} within ${o.timeoutMs} ms`, retry: true }),
      o.timeoutMs,
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      done({ ok: false, error: `sending to ${where} failed: ${err.code ?? err.message}`, retry: true }),
    );
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      let excerpt = '';
      res.setEncoding('utf8');
      const finish = () => {
        const ok = status >= 200 && status < 300;
        const redirect = status >= 300 && status < 400;
        done({
          ok,
          code: status,
          excerpt: excerpt.slice(0, MAX_RESPONSE_EXCERPT),
          ...(ok
            ? {}
            : { error: `${where} answered HTTP ${status}${redirect ? ' (redirects are not followed)' : ''}` }),
          retry: !ok && retryable(status),
        });
      };
      res.on('data', (chunk: string) => {
        excerpt += chunk;
        // Enough kept: the rest is never read.
        if (excerpt.length >= MAX_RESPONSE_EXCERPT) finish();
      });
      res.on('end', finish);
      res.on('error', finish);
    });
    req.end(o.body);
  });
}
