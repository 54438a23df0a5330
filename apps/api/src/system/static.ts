import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Express } from 'express';
import { sendProblem } from '../http/problem.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** apps/web/dist, from apps/api/src or apps/api/dist alike. */
export const DEFAULT_UI_DIR = path.resolve(here, '../../../web/dist');

/** `/` → `/ui/`; `/ui/*` serves the built web app, falling back to its index.html for client-side routes. */
export function mountUi(app: Express, uiDir: string): void {
  app.get('/', (_req, res) => res.redirect(302, '/ui/'));
  // Express matches `/ui` and `/ui/` alike (non-strict routing): redirect only the slash-less form.
  app.get('/ui', (req, res, next) => (req.path === '/ui' ? res.redirect(301, '/ui/') : next()));
  app.use('/ui', express.static(uiDir, { index: 'index.html', fallthrough: true, maxAge: '1h' }));
  // Browsers ask for /favicon.ico on their own: the UI's icon when it ships one, else an empty answer
  // rather than a 404 in every page's console.
  app.get('/favicon.ico', (_req, res) => {
    const icon = path.join(uiDir, 'favicon.ico');
    if (fs.existsSync(icon)) res.sendFile(icon, { maxAge: '1d' });
    else res.status(204).set('Cache-Control', 'public, max-age=86400').end();
  });
  app.get('/ui/{*rest}', (_req, res) => {
    const index = path.join(uiDir, 'index.html');
    if (fs.existsSync(index)) res.sendFile(index);
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
