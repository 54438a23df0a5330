import { ImportFormatParams, ImportQuery, ImportReport, MAX_IMPORT_BYTES } from '@baton/contracts';
import { z } from 'zod';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

/** The export itself: checked by its format's own rules, so any JSON object is accepted here. */
const ImportDocument = z.record(z.string(), z.unknown()).meta({
  id: 'ImportDocument',
  description: 'the JSON `awx export` writes, or a Semaphore project backup (GET /api/project/{id}/backup)',
});

export function importRoutes(s: Pick<Services, 'imports'>): Operation[] {
  return [
    defineOperation({
      operationId: 'importDocument',
      method: 'post',
      path: '/import/{format}',
      tag: 'import',
      auth: 'user',
      legacy: true,
      summary: 'Import an AWX export or a Semaphore project backup (admins).',
      description: `Body up to ${MAX_IMPORT_BYTES / 1024 / 1024} MiB. Everything is written in one transaction, or nothing: one audit entry per object and one for the import. Nothing reaches the network: projects are created never synced (they sync on first use or POST /v1/projects/{id}/sync), inventory sources never refreshed, credentials without their secrets (listed in needs_secret; set them with PUT /v1/credentials/{id}), users without a password (listed in users_needing_password), triggers with a new secret (read it with POST /v1/triggers/{id}/rotate-secret). A malformed or structurally wrong document is a 400 naming the JSON path of its first problem; unknown kinds, fields and versions are reported, never fatal.`,
      params: ImportFormatParams,
      query: ImportQuery,
      body: ImportDocument,
      responses: {
        200: { description: 'What was (or, in a dry run, would be) imported', schema: ImportReport },
        400: { description: 'Not a document of that format: the path of the first problem in `errors`' },
        403: { description: 'Not an admin' },
        413: { description: `Larger than ${MAX_IMPORT_BYTES / 1024 / 1024} MiB` },
      },
      async handle({ principal, params, query, body }) {
        return { status: 200, body: await s.imports.run(principal, params.format, body, query) };
      },
    }),
  ];
}
