import crypto from 'node:crypto';
import type { AuditEntry, AuditExport } from '@baton/contracts';
import { type AuditEntryRow, type AuditFilter, type AuditRepo, GENESIS_HASH } from '@baton/db';
import type { Authorizer, Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, ValidationError } from '../common/errors.js';
import { decodeCursor, notIssued, type Page, toPage } from '../common/paging.js';
import type { SigningKeyStore } from '../keys/signing-key.js';
import { entryHash } from './audit.chain.js';

/** Entries read per query when walking the chain: memory stays bounded by one batch, however long the chain. */
export const AUDIT_BATCH = 1000;
export const EXPORT_FORMAT = 'baton-audit-export/1';

export type VerifyResult =
  { ok: true; entries: number; head: string } | { ok: false; first_bad_seq: number; entries: number };

/**
 * An export on its way out. Everything the signature covers (the head, the count, `exported_at`) is fixed before
 * the first entry is read, so the document can be written front to back while the entries are read in batches.
 */
export interface AuditExportStream {
  /** The head read when the export began: the export holds exactly the entries up to it. */
  head: { seq: number; hash: string };
  exported_at: string;
  /**
   * The document as JSON text in pieces (the fields before the entries, one piece per batch of entries, the
   * fields after them). Joined, the pieces are exactly `JSON.stringify` of the {@link AuditExport}. Reading them
   * walks the chain again, checking every link; an entry that changed since the check before the export throws
   * ConflictError mid-way, so the document is never completed.
   */
  text: AsyncIterable<string>;
}

/** Joins a streamed export into the document: for small chains and tests; a large one should be streamed on. */
export async function collectAuditExport(stream: AuditExportStream): Promise<AuditExport> {
  const pieces: string[] = [];
  for await (const piece of stream.text) pieces.push(piece);
  return JSON.parse(pieces.join('')) as AuditExport;
}

/** The exact text the export signs. The head hash commits to every entry before it. */
export function exportSignedMessage(p: {
  exported_at: string;
  entries: number;
  head: { seq: number; hash: string };
}): string {
  return `${EXPORT_FORMAT}\nexported_at=${p.exported_at}\nentries=${p.entries}\nhead_seq=${p.head.seq}\nhead_hash=${p.head.hash}\n`;
}

const MAX_SEQ = 2 ** 31 - 1;
// Stored `at` values are `YYYY-MM-DDTHH:MM:SS.sssZ` (years 0000–9999) and are compared as text.
const FIRST_AT_MS = Date.parse('0000-01-01T00:00:00.000Z');
const LAST_AT_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** Milliseconds since the epoch, rounded up when the time has digits finer than a millisecond. */
function ceilMillis(t: string, path: string): number {
  const m = /^([^.]*)(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/i.exec(t);
  const whole = m ? Date.parse(`${m[1]!}${m[3]!}`) : NaN;
  if (!m || Number.isNaN(whole))
    throw new ValidationError(`invalid ${path}`, [{ path, message: 'not an RFC 3339 date-time' }]);
  const fraction = m[2] ?? '';
  const millis = Number(fraction.slice(0, 3).padEnd(3, '0'));
  return whole + millis + (/[1-9]/.test(fraction.slice(3)) ? 1 : 0);
}

/**
 * Turns `since` (inclusive) and `until` (exclusive), given with any offset and precision, into the text bounds
 * that select exactly the entries in that window: `at >= since` and `at < until` hold for a millisecond `at`
 * exactly when they hold against the bound rounded up to the next millisecond. Bounds beyond the years 0000–9999
 * (where ISO text stops sorting like time) either drop out or leave nothing to find.
 */
export function auditTimeWindow(
  since: string | undefined,
  until: string | undefined,
): { since?: string; until?: string } | 'empty' {
  const out: { since?: string; until?: string } = {};
  if (since !== undefined) {
    const ms = ceilMillis(since, 'since');
    if (ms > LAST_AT_MS) return 'empty';
    if (ms > FIRST_AT_MS) out.since = new Date(ms).toISOString();
  }
  if (until !== undefined) {
    const ms = ceilMillis(until, 'until');
    if (ms <= FIRST_AT_MS) return 'empty';
    if (ms <= LAST_AT_MS) out.until = new Date(ms).toISOString();
  }
  return out;
}

/** The audit trail is for admins only: every operation takes the caller and refuses anyone else (ForbiddenError). */
export function createAuditService(deps: {
  audit: Pick<AuditRepo, 'list' | 'range' | 'head'>;
  signingKeys: SigningKeyStore;
  clock: Clock;
  authz: Pick<Authorizer, 'requireAdmin'>;
  /** entries per query while walking the chain; default {@link AUDIT_BATCH} */
  batchSize?: number;
}) {
  const batchSize = deps.batchSize ?? AUDIT_BATCH;

  /**
   * Walks the chain up to `head` (read before the walk, so entries committed meanwhile do not confuse it) in keyset
   * batches by seq, checking every link; yields each batch once all of it checked out; returns the verdict.
   */
  async function* verifiedBatches(head: {
    seq: number;
    hash: string;
  }): AsyncGenerator<AuditEntryRow[], VerifyResult, undefined> {
    let prev = GENESIS_HASH;
    let expected = 1;
    while (expected <= head.seq) {
      const batch = await deps.audit.range(expected - 1, Math.min(batchSize, head.seq - expected + 1));
      if (batch.length === 0) break;
      for (const e of batch) {
        if (e.seq !== expected || e.prev_hash !== prev || entryHash(prev, e) !== e.hash) {
          return { ok: false, first_bad_seq: expected, entries: head.seq };
        }
        prev = e.hash;
        expected++;
      }
      yield batch;
    }
    // Entries cut off the end, or a head that no longer matches the last entry.
    if (expected <= head.seq || head.hash !== prev)
      return { ok: false, first_bad_seq: Math.min(expected, head.seq), entries: head.seq };
    return { ok: true, entries: head.seq, head: head.hash };
  }

  /** The verdict on the chain up to `head`, holding one batch at a time. */
  async function walk(head: { seq: number; hash: string }): Promise<VerifyResult> {
    const batches = verifiedBatches(head);
    for (;;) {
      const step = await batches.next();
      if (step.done) return step.value;
    }
  }

  /** The export document's text: the fields before the entries, the entries batch by batch, the signed trailer. */
  async function* exportText(
    head: { seq: number; hash: string },
    opening: Omit<AuditExport, 'entries' | 'key_id' | 'public_key' | 'signed_message' | 'signature'>,
    closing: Pick<AuditExport, 'key_id' | 'public_key' | 'signed_message' | 'signature'>,
  ): AsyncGenerator<string, void, undefined> {
    // The same key order as the AuditExport object, so the joined text is exactly its JSON.stringify.
    yield `${JSON.stringify(opening).slice(0, -1)},"entries":[`;
    const batches = verifiedBatches(head);
    let first = true;
    for (;;) {
      const step = await batches.next();
      if (step.done) {
        if (!step.value.ok)
          throw new ConflictError(
            `the audit chain changed at seq ${step.value.first_bad_seq} while it was being exported; the export is incomplete`,
          );
        break;
      }
      const piece = step.value.map((e) => JSON.stringify(e)).join(',');
      yield first ? piece : `,${piece}`;
      first = false;
    }
    yield `],${JSON.stringify(closing).slice(1)}`;
  }

  return {
    /** `since` and `until` are RFC 3339 times with any offset and precision; see {@link auditTimeWindow}. */
    async list(
      p: Principal,
      filter: AuditFilter,
      page: { limit: number; cursor?: string | undefined },
    ): Promise<Page<AuditEntry>> {
      deps.authz.requireAdmin(p);
      const before = decodeCursor(page.cursor);
      // seq is an INTEGER column: a larger number is no cursor of ours and would make PostgreSQL fail the query.
      if (before !== undefined && (!/^\d{1,10}$/.test(before) || Number(before) > MAX_SEQ)) {
        throw notIssued();
      }
      const window = auditTimeWindow(filter.since, filter.until);
      if (window === 'empty') return { items: [] };
      const rows = await deps.audit.list(
        { ...filter, since: window.since, until: window.until },
        { limit: page.limit + 1, beforeSeq: before === undefined ? undefined : Number(before) },
      );
      return toPage(rows, page.limit, (r) => r.seq);
    },

    async verify(p: Principal): Promise<VerifyResult> {
      deps.authz.requireAdmin(p);
      return walk(await deps.audit.head());
    },

    /**
     * A snapshot that verifies offline: the entries, the signed head and the public key, streamed in constant
     * memory. The chain up to the head is checked in full first (one batch in memory at a time), so a broken chain
     * is a ConflictError before anything is sent; then {@link AuditExportStream.text} reads it again as it is sent.
     */
    async export(p: Principal): Promise<AuditExportStream> {
      deps.authz.requireAdmin(p);
      const head = await deps.audit.head();
      const result = await walk(head);
      if (!result.ok)
        throw new ConflictError(`the audit chain is broken at seq ${result.first_bad_seq}; nothing was exported`);
      const key = await deps.signingKeys.auditKey();
      const exported_at = iso(deps.clock());
      const signed_message = exportSignedMessage({ exported_at, entries: head.seq, head });
      const signature = crypto.sign(null, Buffer.from(signed_message, 'utf8'), key.privateKey).toString('base64');
      return {
        head,
        exported_at,
        text: exportText(
          head,
          { format: EXPORT_FORMAT, exported_at, head: { seq: head.seq, hash: head.hash } },
          { key_id: key.keyId, public_key: key.publicKeyPem, signed_message, signature },
        ),
      };
    },
  };
}
export type AuditService = ReturnType<typeof createAuditService>;
