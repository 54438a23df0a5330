import crypto from 'node:crypto';
import type { AuditEntry, AuditExport } from '@baton/contracts';
import { type AuditFilter, type AuditRepo, GENESIS_HASH } from '@baton/db';
import type { Authorizer, Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, ValidationError } from '../common/errors.js';
import { decodeCursor, notIssued, type Page, toPage } from '../common/paging.js';
import type { SigningKeyStore } from '../keys/signing-key.js';
import { entryHash } from './audit.chain.js';

const BATCH = 1000;
export const EXPORT_FORMAT = 'baton-audit-export/1';

export type VerifyResult =
  { ok: true; entries: number; head: string } | { ok: false; first_bad_seq: number; entries: number };

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
}) {
  /** Walks the chain up to the head read at the start, so entries committed meanwhile do not confuse it. */
  async function walk(onEntry?: (e: AuditEntry) => void): Promise<VerifyResult> {
    const head = await deps.audit.head();
    let prev = GENESIS_HASH;
    let expected = 1;
    while (expected <= head.seq) {
      const batch = await deps.audit.range(expected - 1, Math.min(BATCH, head.seq - expected + 1));
      if (batch.length === 0) break;
      for (const e of batch) {
        if (e.seq !== expected || e.prev_hash !== prev || entryHash(prev, e) !== e.hash) {
          return { ok: false, first_bad_seq: expected, entries: head.seq };
        }
        onEntry?.(e);
        prev = e.hash;
        expected++;
      }
    }
    // Entries cut off the end, or a head that no longer matches the last entry.
    if (expected <= head.seq || head.hash !== prev)
      return { ok: false, first_bad_seq: Math.min(expected, head.seq), entries: head.seq };
    return { ok: true, entries: head.seq, head: head.hash };
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
      return walk();
    },

    /** A snapshot that verifies offline: the entries, the signed head and the public key. */
    async export(p: Principal): Promise<AuditExport> {
      deps.authz.requireAdmin(p);
      const entries: AuditEntry[] = [];
      const result = await walk((e) => entries.push(e));
      if (!result.ok)
        throw new ConflictError(`the audit chain is broken at seq ${result.first_bad_seq}; nothing was exported`);
      const key = await deps.signingKeys.auditKey();
      const base = {
        exported_at: iso(deps.clock()),
        entries: entries.length,
        head: { seq: result.entries, hash: result.head },
      };
      const signed_message = exportSignedMessage(base);
      const signature = crypto.sign(null, Buffer.from(signed_message, 'utf8'), key.privateKey).toString('base64');
      return {
        format: EXPORT_FORMAT,
        exported_at: base.exported_at,
        head: base.head,
        entries,
        key_id: key.keyId,
        public_key: key.publicKeyPem,
        signed_message,
        signature,
      };
    },
  };
}
export type AuditService = ReturnType<typeof createAuditService>;
