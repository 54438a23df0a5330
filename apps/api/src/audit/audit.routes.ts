import { AuditEntry, AuditExport, AuditListQuery, AuditVerifyResult } from '@baton/contracts';
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
        'Ed25519 signature over `signed_message`, which names the head hash; the head hash commits to every entry. See the README for offline verification.',
      responses: { 200: { description: 'The snapshot', schema: AuditExport } },
      async handle({ principal }) {
        return {
          status: 200,
          body: await s.audit.export(principal),
          headers: { 'Content-Disposition': 'attachment; filename="baton-audit-export.json"' },
        };
      },
    }),
  ];
}
