import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Express, type Response } from 'express';
import { sendProblem } from '../http/problem.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** apps/web/dist, from apps/api/src or apps/api/dist alike. */
export const DEFAULT_UI_DIR = path.resolve(here, '../../../web/dist');

/**
 * The UI's Content-Security-Policy: scripts, styles and connections only from this origin (no inline script, no
 * eval), never framed. React sets styles through the CSSOM, which style-src does not govern.
 */
export const UI_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Vite names built assets by content hash: they never change, so browsers may keep them for a year. */
const HASHED_ASSET = /\/assets\/[^/]+-[A-Za-z0-9_-]{8,}\.[a-z0-9]+$/;

function uiHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', UI_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
}

/** `/` → `/ui/`; `/ui/*` serves the built web app, falling back to its index.html for client-side routes. */
export function mountUi(app: Express, uiDir: string): void {
  app.get('/', (_req, res) => res.redirect(302, '/ui/'));
  // Express matches `/ui` and `/ui/` alike (non-strict routing): redirect only the slash-less form.
  app.get('/ui', (req, res, next) => (req.path === '/ui' ? res.redirect(301, '/ui/') : next()));
  app.use('/ui', (_req, res, next) => {
    uiHeaders(res);
    next();
  });
  app.use(
    '/ui',
    express.static(uiDir, {
      index: 'index.html',
      fallthrough: true,
      setHeaders(res, filePath) {
        // index.html names the current assets: always revalidated, so a new release is picked up at once.
        if (HASHED_ASSET.test(filePath)) res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
        else res.setHeader('Cache-Control', 'no-cache');
      },
    }),
  );
  // Browsers ask for /favicon.ico on their own: the UI's icon when it ships one, else an empty answer
  // rather than a 404 in every page's console.
  app.get('/favicon.ico', (_req, res) => {
    const icon = path.join(uiDir, 'favicon.ico');
    if (fs.existsSync(icon)) res.sendFile(icon, { maxAge: '1d' });
    else res.status(204).set('Cache-Control', 'public, max-age=86400').end();
  });
  // A missing asset is a 404, not the app's page (a stale index.html must not get HTML for its script).
  app.get('/ui/assets/{*rest}', (_req, res) => sendProblem(res, 404, 'not-found', 'no such asset'));
  app.get('/ui/{*rest}', (_req, res) => {
    const index = path.join(uiDir, 'index.html');
    if (fs.existsSync(index)) res.sendFile(index, { headers: { 'Cache-Control': 'no-cache' } });
    else sendProblem(res, 503, 'ui-not-built', `the web UI is not built (${uiDir} has no index.html); run pnpm build`);
  });
}

const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Baton API</title>
<link rel="stylesheet" href="/v1/docs/assets/swagger-ui.css"></head>
<body><div id="docs"></div>
<script src="/v1/docs/assets/swagger-ui-bundle.js"></script>
<script src="/v1/docs/init.js"></script></body></html>`;

// Tags start collapsed: with every operation (and the deprecated unprefixed copies) open at once, Swagger UI stops
// rendering after the first few tags.
const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: '/v1/openapi.json', dom_id: '#docs', deepLinking: true, docExpansion: 'none' });`;

/** `/v1/docs`: Swagger UI from the swagger-ui-dist package (no CDN), reading /v1/openapi.json. */
export function mountDocs(app: Express): void {
  const require = createRequire(import.meta.url);
  const assets = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  app.get('/v1/docs', (_req, res) => res.type('html').send(DOCS_PAGE));
  app.get('/v1/docs/init.js', (_req, res) => res.type('application/javascript').send(DOCS_INIT));
  app.use('/v1/docs/assets', express.static(assets, { index: false, maxAge: '1d' }));
}
