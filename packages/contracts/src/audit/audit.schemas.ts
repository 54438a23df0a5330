import { z } from 'zod';
import { PageCursor, PageLimit, Timestamp } from '../common/common.schemas.js';

export const AuditEntry = z
  .object({
    seq: z.number().int(),
    at: Timestamp,
    actor: z.string(),
    action: z.string(),
    object: z.string().nullable(),
    summary: z.string(),
    prev_hash: z.string(),
    hash: z.string(),
  })
  .meta({ id: 'AuditEntry' });
export type AuditEntry = z.infer<typeof AuditEntry>;

export const AuditListQuery = z.strictObject({
  limit: PageLimit,
  cursor: PageCursor.optional(),
  actor: z.string().min(1).max(64).optional(),
  object: z.string().min(1).max(64).optional(),
  action: z.string().min(1).max(64).optional(),
  since: z.iso.datetime({ offset: true }).optional().meta({ description: 'entries at or after this time' }),
  until: z.iso.datetime({ offset: true }).optional().meta({ description: 'entries before this time' }),
});

export const AuditVerifyResult = z
  .union([
    z.object({ ok: z.literal(true), entries: z.number().int(), head: z.string() }),
    z.object({ ok: z.literal(false), first_bad_seq: z.number().int(), entries: z.number().int() }),
  ])
  .meta({ id: 'AuditVerifyResult' });

export const AuditExport = z
  .object({
    format: z.literal('baton-audit-export/1'),
    exported_at: Timestamp,
    head: z.object({ seq: z.number().int(), hash: z.string() }),
    entries: z.array(AuditEntry),
    key_id: z.string().meta({ description: 'SHA-256 fingerprint of the public key (hex); pin it' }),
    public_key: z.string().meta({ description: 'Ed25519 public key, PEM (SPKI)' }),
    signed_message: z.string().meta({ description: 'the exact bytes that were signed' }),
    signature: z.string().meta({ description: 'Ed25519 signature of signed_message, base64' }),
  })
  .meta({ id: 'AuditExport' });
export type AuditExport = z.infer<typeof AuditExport>;
