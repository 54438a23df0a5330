import type { Page } from '@baton/core';
import type { Request } from 'express';
import type { Reply } from './registry.js';

/** 200 with the page's items as a JSON array and, when there is more, `Link: <…cursor=…>; rel="next"`. */
export function pageReply<T>(req: Request, page: Page<T>): Reply {
  if (!page.next) return { status: 200, body: page.items };
  const url = new URL(req.originalUrl, 'http://x');
  url.searchParams.set('cursor', page.next);
  return { status: 200, body: page.items, headers: { Link: `<${url.pathname}${url.search}>; rel="next"` } };
}
