import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AuditEntry, AuditExport, AuditListQuery, AuditVerifyResult } from '@baton/contracts';
import type { Response } from 'express';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

export function auditRoutes(s: Pick<Services, 'audit'>): Operation[] {
  return [
    defineOperation({
      operationId: 'listAudit',
      method: 'get',
      path: '/audit',
      tag: 'audit',
      auth: 'user',
      legacy: true,
      summary: 'The mutation trail, newest first (admin only). Filters: actor, object, action, since, until.',
      query: AuditListQuery,
      responses: { 200: { description: 'Entries', schema: z.array(AuditEntry) } },
      async handle({ principal, query, req }) {
        const { limit, cursor, ...filter } = query;
        // since/until go on as given: the service turns any offset and precision into exact bounds.
        return pageReply(req, await s.audit.list(principal, filter, { limit, cursor }));
      },
    }),
    defineOperation({
      operationId: 'verifyAudit',
      method: 'get',
      path: '/audit/verify',
      tag: 'audit',
      auth: 'user',
      legacy: true,
      summary: 'Recompute the hash chain (admin only): {ok, entries, head} or {ok: false, first_bad_seq}.',
      responses: { 200: { description: 'Verification result', schema: AuditVerifyResult } },
      async handle({ principal }) {
        return { status: 200, body: await s.audit.verify(principal) };
      },
    }),
    defineOperation({
      operationId: 'exportAudit',
      method: 'get',
      path: '/audit/export',
      tag: 'audit',
      auth: 'user',
      legacy: true,
      summary: 'Signed, self-verifying snapshot of the chain (admin only). 409 if the chain is broken.',
      description:
        'Ed25519 signature over `signed_message`, which names the head hash; the head hash commits to every entry. See the README for offline verification. ' +
        'The export holds the entries up to the head read when it began (entries appended meanwhile are left for the next export) and is streamed in constant memory. ' +
        'The whole chain is checked before the answer starts, so a broken chain is a 409; an entry altered while the export is under way aborts the transfer (the document is never completed).',
      responses: { 200: { description: 'The snapshot', schema: AuditExport } },
      async handle({ principal, req, res }) {
        // A 403 or 409 is thrown here, before anything is sent.
        const exported = await s.audit.export(principal);
        res.status(200);
        res.setHeader('Content-Type', 'application/json; charset=utf-8');
        res.setHeader('Content-Disposition', 'attachment; filename="baton-audit-export.json"');
        // HEAD: the answer a GET would start with, without walking the chain a second time for a body nobody gets.
        if (req.method === 'HEAD') res.end();
        else await sendText(res, exported.text);
        return undefined;
      },
    }),
  ];
}

/**
 * Writes the pieces as they come, pulling the next only when the client has taken the previous (backpressure), so
 * the server holds about one batch whatever the size of the chain. If the pieces fail mid-way, the connection is
 * cut: a client sees a truncated transfer, never a complete-looking document.
 */
async function sendText(res: Response, pieces: AsyncIterable<string>): Promise<void> {
  try {
    await pipeline(Readable.from(pieces, { objectMode: false }), res);
  } catch (err) {
    // The client hung up: nobody is left to answer, and the walk has stopped with the pipeline.
    if ((err as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    throw err;
  }
}
