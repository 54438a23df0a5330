import crypto from 'node:crypto';
import { storableText } from '@baton/contracts';
import type { AuditEntryRow, AuditRepo } from '@baton/db';
import { type Clock, iso } from '../common/clock.js';

/** What a mutation records. No secret may ever be put in `summary`: callers build it from safe fields. */
export interface AuditRecord {
  actor: string;
  action: string;
  object: string | null;
  summary: string;
}

type HashedFields = Pick<AuditEntryRow, 'seq' | 'at' | 'actor' | 'action' | 'object' | 'summary'>;

/**
 * Canonical bytes of an entry: UTF-8 JSON of exactly these six fields, keys in this (alphabetical) order,
 * no whitespace. Documented in the README so an export verifies without Baton.
 */
export function canonicalEntryBytes(e: HashedFields): Buffer {
  return Buffer.from(
    JSON.stringify({ action: e.action, actor: e.actor, at: e.at, object: e.object, seq: e.seq, summary: e.summary }),
    'utf8',
  );
}

/** hash = SHA-256(prev_hash ‖ canonical bytes), hex; prev_hash as its 64 hex characters. */
export function entryHash(prevHash: string, e: HashedFields): string {
  return crypto.createHash('sha256').update(prevHash, 'utf8').update(canonicalEntryBytes(e)).digest('hex');
}

/**
 * Appends an entry; call it with the transaction-bound audit repository of the change it records. The one entry
 * value is both stored and hashed, in the form the database keeps, so verifying the stored row recomputes exactly
 * the hash it carries whatever text the caller passed.
 */
export function recordAudit(repo: Pick<AuditRepo, 'append'>, rec: AuditRecord, clock: Clock): Promise<AuditEntryRow> {
  const entry = {
    at: iso(clock()),
    actor: storableText(rec.actor),
    action: storableText(rec.action),
    object: rec.object === null ? null : storableText(rec.object),
    summary: storableText(rec.summary),
  };
  return repo.append(entry, (row) => entryHash(row.prev_hash, row));
}
