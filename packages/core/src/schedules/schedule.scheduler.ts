// Firing schedules (issue 11 "Schedules"): every API replica ticks; a due time is fired by the replica whose claim
// of (schedule, due time) lands in the database, exactly once however many replicas tick. The run is submitted as
// the schedule's owner through the one submission path. A fire that cannot submit is recorded and audited and the
// schedule moves on.

import type { AuditRepo, ScheduleRepo, ScheduleRow, UserRepo } from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { type Principal, principalOf } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { BatonError, UnprocessableError, ValidationError } from '../common/errors.js';
import { type Keyring, openSealedJson } from '../crypto/secret-box.js';
import type { Launcher } from '../launching/launcher.js';
import { nextCronTime } from './schedule.cron.js';

export interface ScheduleSchedulerDeps {
  schedules: Pick<ScheduleRepo, 'due' | 'claimFire' | 'advance' | 'recordFire'>;
  users: Pick<UserRepo, 'findById'>;
  transaction: <T>(fn: (r: { audit: Pick<AuditRepo, 'append'> }) => Promise<T>) => Promise<T>;
  keyring: Pick<Keyring, 'decrypt'>;
  launcher: Pick<Launcher, 'launch' | 'joinSecrets'>;
  clock: Clock;
  /** this replica's name, recorded on the slots it claims */
  replica: string;
  /** failures no schedule can record (the database away, say) */
  reportError: (err: unknown) => void;
  /** most schedules looked at per tick (the rest wait for the next tick); default 100 */
  batch?: number | undefined;
}

/** What one tick did with one due schedule. */
export interface ScheduleFireResult {
  scheduleId: string;
  dueAt: string;
  /** false: another replica claimed this due time (or the schedule changed or went away first) */
  claimed: boolean;
  runId: string | null;
  error: string | null;
}

/** Longest last_error kept. */
const MAX_ERROR_CHARS = 1000;

/** Why a fire could not submit, in words fit for last_error and the audit trail (never secrets: errors name fields). */
function describeFailure(err: unknown): string {
  if (!(err instanceof BatonError)) return 'internal error while submitting (see the server log)';
  const fields =
    err instanceof ValidationError || err instanceof UnprocessableError
      ? err.errors.map((e) => `${e.path}: ${e.message}`)
      : [];
  const text = fields.length ? `${err.message} (${fields.join('; ')})` : err.message;
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 1)}…` : text;
}

export function createScheduleScheduler(deps: ScheduleSchedulerDeps) {
  const batch = deps.batch ?? 100;

  /** The owner as a principal, as they are now (role changes apply); an error text when they are gone. */
  async function ownerOf(s: ScheduleRow): Promise<Principal | string> {
    return (await principalOf(deps.users, s.created_by)) ?? `the schedule's owner ${s.created_by} no longer exists`;
  }

  /** Submits the schedule's target as its owner: the run's id, or why not. */
  async function launch(s: ScheduleRow): Promise<{ runId: string | null; error: string | null }> {
    const owner = await ownerOf(s);
    if (typeof owner === 'string') return { runId: null, error: owner };
    let secrets: Record<string, string> | null = null;
    if (s.target_secrets_enc !== null) {
      try {
        secrets = openSealedJson<Record<string, string>>(deps.keyring, s.target_secrets_enc);
      } catch {
        return { runId: null, error: 'the sealed survey answers could not be opened with the current master keys' };
      }
    }
    try {
      const target = deps.launcher.joinSecrets(s.target as Parameters<Launcher['launch']>[1], secrets);
      const run = await deps.launcher.launch(owner, target, { origin: 'schedule', scheduleId: s.id });
      return { runId: run.id, error: null };
    } catch (err) {
      if (!(err instanceof BatonError)) deps.reportError(err);
      return { runId: null, error: describeFailure(err) };
    }
  }

  async function fire(s: ScheduleRow, now: Date): Promise<ScheduleFireResult> {
    const dueAt = s.next_run_at!;
    const claimed = await deps.schedules.claimFire({
      schedule_id: s.id,
      due_at: dueAt,
      claimed_at: iso(now),
      claimed_by: deps.replica,
    });
    // Whoever saw the slot due moves the schedule past now (compare-and-set on the old due time): a replica that
    // claimed a slot and died before moving on cannot stall the schedule, and slots missed while no replica was up
    // fire once, not once each.
    const next = nextCronTime(s.cron, s.timezone, now);
    await deps.schedules.advance(s.id, dueAt, next === null ? null : iso(next));
    if (!claimed) return { scheduleId: s.id, dueAt, claimed, runId: null, error: null };

    const { runId, error } = await launch(s);
    const firedAt = iso(deps.clock());
    // A schedule deleted meanwhile: these touch no row, which is fine.
    await deps.schedules.recordFire(s.id, dueAt, { run_id: runId, error, fired_at: firedAt });
    if (error !== null) {
      await deps.transaction((r) =>
        recordAudit(
          r.audit,
          {
            actor: s.created_by,
            action: 'schedule.fire_failed',
            object: s.id,
            summary: `schedule ${s.name} could not fire its run due at ${dueAt}: ${error}`,
          },
          deps.clock,
        ),
      );
    }
    return { scheduleId: s.id, dueAt, claimed, runId, error };
  }

  return {
    /**
     * Fires every enabled schedule due at `now` (default: the clock) whose due time this replica claims. Never
     * throws: a failure that no schedule can record goes to `reportError`.
     */
    async tick(now: Date = deps.clock()): Promise<ScheduleFireResult[]> {
      let due: ScheduleRow[];
      try {
        due = await deps.schedules.due(iso(now), batch);
      } catch (err) {
        deps.reportError(err);
        return [];
      }
      const results: ScheduleFireResult[] = [];
      for (const s of due) {
        try {
          results.push(await fire(s, now));
        } catch (err) {
          deps.reportError(err);
        }
      }
      return results;
    },
  };
}
export type ScheduleScheduler = ReturnType<typeof createScheduleScheduler>;
