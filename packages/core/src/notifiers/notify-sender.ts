// The sender every API replica runs: it fans outbox entries out into one delivery per matching notifier (each
// entry claimed by one replica), then attempts due deliveries (each leased by one replica at a time), retrying with
// exponential backoff for up to 24 hours. Nothing here blocks or slows a run: the run only wrote its outbox row.
import {
  MAX_DELIVERY_AGE_S,
  MAX_RESPONSE_EXCERPT,
  type NotifierKind,
  type NotifierMatch,
  type NotifyEvent,
} from '@baton/contracts';
import type {
  DeliveryRow,
  NotifierRepo,
  NotifierRow,
  OutboxRow,
  RunRepo,
  ScheduleRepo,
  TemplateRepo,
  ProjectRepo,
  UserRepo,
} from '@baton/db';
import { principalOf, type Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { pendingDelivery } from './notifier.service.js';
import type { NotificationMessage, NotifiedRun, NotifyTransport } from './notify-transport.js';

type SenderRepos = {
  notifiers: Pick<
    NotifierRepo,
    | 'pendingOutbox'
    | 'claimOutbox'
    | 'all'
    | 'insertDelivery'
    | 'dueDeliveries'
    | 'claimDelivery'
    | 'recordAttempt'
    | 'findDelivery'
    | 'findById'
  >;
  runs: Pick<RunRepo, 'findById' | 'hostsOf'>;
  schedules: Pick<ScheduleRepo, 'findById'>;
  templates: Pick<TemplateRepo, 'findById'>;
  projects: Pick<ProjectRepo, 'findById'>;
};

export interface NotifySenderDeps extends SenderRepos {
  transaction: <T>(fn: (r: Pick<SenderRepos, 'notifiers'>) => Promise<T>) => Promise<T>;
  users: Pick<UserRepo, 'findById'>;
  /** whether the notifier's owner may see this run (grants apply to notifications as to everything) */
  canSee: (p: Principal, runId: string) => Promise<boolean>;
  secretsOf: (row: NotifierRow) => Record<string, unknown>;
  transport: NotifyTransport;
  clock: Clock;
  /** this replica's name, the holder of its leases */
  holder: string;
  /** BATON_PUBLIC_URL, for links to runs */
  publicUrl: string;
  /** email recipients for a held run: its approvers' addresses */
  approverEmails?: (runId: string) => Promise<string[]>;
  leaseMs?: number;
}

/** The notify event a run status change is, or none. */
export function runEventOf(status: string, conclusion: string | null): NotifyEvent | undefined {
  if (status === 'running') return 'run.started';
  if (status === 'held') return 'run.held';
  if (status !== 'finished') return undefined;
  if (conclusion === 'succeeded') return 'run.succeeded';
  if (conclusion === 'failed' || conclusion === 'error') return 'run.failed';
  if (conclusion === 'canceled' || conclusion === 'rejected') return 'run.canceled';
  return undefined;
}

/** Whether a notifier's match holds for a run (or a schedule's error: its schedule and template). */
export function matches(
  match: NotifierMatch | null,
  about: {
    template_id?: string | null;
    project_id?: string | null;
    schedule_id?: string | null;
    trigger_id?: string | null;
    origin?: string | null;
  },
): boolean {
  if (!match) return true;
  const holds = (list: readonly string[] | undefined, value: string | null | undefined) =>
    list === undefined || (value !== null && value !== undefined && list.includes(value));
  return (
    holds(match.templates, about.template_id) &&
    holds(match.projects, about.project_id) &&
    holds(match.schedules, about.schedule_id) &&
    holds(match.triggers, about.trigger_id) &&
    holds(match.origins, about.origin)
  );
}

/** Backoff after the n-th failed attempt: 30 s, 1 min, 2 min… capped at one hour. */
export const backoffMs = (attempts: number) => Math.min(30_000 * 2 ** Math.max(0, attempts - 1), 3_600_000);

const FAILED = new Set(['failed', 'unreachable']);

export function createNotifySender(deps: NotifySenderDeps) {
  const leaseMs = deps.leaseMs ?? 60_000;

  async function runMessage(
    event: NotifyEvent,
    runId: string,
    at: string,
  ): Promise<{ message: NotificationMessage; about: Parameters<typeof matches>[1] } | undefined> {
    const run = await deps.runs.findById(runId);
    if (!run) return undefined;
    const hosts = await deps.runs.hostsOf(runId);
    const summary: Record<string, number> = {};
    const failedHosts: string[] = [];
    for (const h of hosts) {
      summary[h.outcome] = (summary[h.outcome] ?? 0) + 1;
      if (FAILED.has(h.outcome) && failedHosts.length < 50) failedHosts.push(h.host);
    }
    const template = run.template_id ? await deps.templates.findById(run.template_id) : undefined;
    const project = run.project_id ? await deps.projects.findById(run.project_id) : undefined;
    const notified: NotifiedRun = {
      id: run.id,
      status: run.status,
      conclusion: run.conclusion,
      reason: run.reason,
      origin: run.origin,
      template: template ? { id: template.id, name: template.name } : null,
      project: project ? { id: project.id, name: project.name } : null,
      commit: run.git_commit,
      host_summary: summary,
      failed_hosts: failedHosts,
      url: `${deps.publicUrl.replace(/\/$/, '')}/ui/runs/${run.id}`,
    };
    const what = template?.name ?? project?.name ?? run.id;
    const words: Record<string, string> = {
      'run.started': 'started',
      'run.held': 'is waiting for approval',
      'run.succeeded': 'succeeded',
      'run.failed': failedHosts.length
        ? `failed on ${failedHosts.length} host${failedHosts.length === 1 ? '' : 's'}`
        : 'failed',
      'run.canceled': run.conclusion === 'rejected' ? 'was rejected' : 'was canceled',
      'worker.lost': `lost its worker ${run.worker ?? ''}`.trim(),
    };
    return {
      message: {
        event,
        at,
        run: notified,
        summary: `${what} (${run.id}) ${words[event] ?? event}`,
        ...(event === 'worker.lost' ? { worker: { name: run.worker ?? 'unknown', runs: [run.id] } } : {}),
      },
      about: run,
    };
  }

  /** The messages an outbox entry is: usually one, two for a run finished because its worker was lost. */
  async function messagesOf(entry: OutboxRow): Promise<
    Array<{
      event: NotifyEvent;
      message: NotificationMessage;
      about: Parameters<typeof matches>[1];
      runId: string | null;
    }>
  > {
    if (entry.source === 'schedule') {
      const s = await deps.schedules.findById(entry.subject_id);
      if (!s) return [];
      return [
        {
          event: 'schedule.error',
          runId: null,
          about: { schedule_id: s.id, template_id: s.template_id, origin: 'schedule' },
          message: {
            event: 'schedule.error',
            at: entry.at,
            run: null,
            schedule: { id: s.id, name: s.name, error: s.last_error ?? 'the schedule could not fire' },
            summary: `schedule ${s.name} could not fire: ${s.last_error ?? 'unknown error'}`,
          },
        },
      ];
    }
    const run = await deps.runs.findById(entry.subject_id);
    if (!run) return [];
    const out = [];
    const event = runEventOf(entry.status, run.status === entry.status ? run.conclusion : null);
    for (const e of [
      event,
      entry.status === 'finished' && run.reason === 'worker_lost' ? ('worker.lost' as const) : undefined,
    ]) {
      if (!e) continue;
      const built = await runMessage(e, run.id, entry.at);
      if (built) out.push({ event: e, runId: run.id, ...built });
    }
    return out;
  }

  async function ownerSees(row: NotifierRow, runId: string | null): Promise<boolean> {
    if (runId === null) return true;
    const owner = await principalOf(deps.users, row.created_by);
    return owner !== null && (await deps.canSee(owner, runId));
  }

  /** Fans out up to `limit` outbox entries; answers how many deliveries it queued. */
  async function fanOut(limit = 100): Promise<number> {
    let queued = 0;
    const entries = await deps.notifiers.pendingOutbox(limit);
    if (!entries.length) return 0;
    const notifiers = await deps.notifiers.all();
    for (const entry of entries) {
      const messages = await messagesOf(entry);
      const deliveries: DeliveryRow[] = [];
      for (const m of messages) {
        for (const n of notifiers) {
          if (!(n.events as string[]).includes(m.event)) continue;
          if (!matches(n.match as NotifierMatch | null, m.about)) continue;
          if (!(await ownerSees(n, m.runId))) continue;
          const recipients =
            m.event === 'run.held' && n.kind === 'email' && deps.approverEmails && m.runId
              ? await deps.approverEmails(m.runId)
              : undefined;
          deliveries.push(
            pendingDelivery({
              notifierId: n.id,
              outboxId: m.event === 'worker.lost' ? `${entry.id}:worker` : entry.id,
              event: m.event,
              runId: m.runId,
              message: { ...m.message, ...(recipients?.length ? { recipients } : {}) },
              at: iso(deps.clock()),
            }),
          );
        }
      }
      // The claim and the deliveries commit together: a replica that dies in between leaves the entry unclaimed.
      const claimed = await deps.transaction(async (r) => {
        if (!(await r.notifiers.claimOutbox(entry.id))) return false;
        for (const d of deliveries) await r.notifiers.insertDelivery(d);
        return true;
      });
      if (claimed) queued += deliveries.length;
    }
    return queued;
  }

  /** Attempts up to `limit` due deliveries; answers how many it attempted. */
  async function deliverDue(limit = 20): Promise<number> {
    const now = deps.clock();
    const ids = await deps.notifiers.dueDeliveries(iso(now), limit);
    let attempted = 0;
    for (const id of ids) {
      const at = deps.clock();
      if (!(await deps.notifiers.claimDelivery(id, deps.holder, iso(at), iso(new Date(at.getTime() + leaseMs)))))
        continue;
      const delivery = await deps.notifiers.findDelivery(id);
      const notifier = delivery && (await deps.notifiers.findById(delivery.notifier_id));
      if (!delivery || !notifier) continue; // deleted meanwhile: its deliveries went with it
      const message = JSON.parse(delivery.message) as NotificationMessage & { recipients?: string[] };
      const result = await deps.transport(
        {
          kind: notifier.kind as NotifierKind,
          config: notifier.config,
          secrets: deps.secretsOf(notifier),
          recipients: message.recipients,
        },
        message,
        { deliveryId: delivery.id },
      );
      attempted++;
      const done = deps.clock();
      const attempts = delivery.attempts + 1;
      const age = done.getTime() - Date.parse(delivery.created_at);
      const next = new Date(done.getTime() + backoffMs(attempts));
      const retry =
        !result.ok &&
        result.retry &&
        next.getTime() - Date.parse(delivery.created_at) <= MAX_DELIVERY_AGE_S * 1000 &&
        age >= 0;
      await deps.notifiers.recordAttempt(id, deps.holder, {
        status: result.ok ? 'delivered' : retry ? 'retrying' : 'dead',
        attempts,
        last_attempt_at: iso(done),
        next_attempt_at: retry ? iso(next) : null,
        response_code: result.code ?? null,
        error: result.ok ? null : (result.error ?? 'failed').slice(0, 1000),
        response_excerpt: result.excerpt?.slice(0, MAX_RESPONSE_EXCERPT) ?? null,
      });
    }
    return attempted;
  }

  return {
    fanOut,
    deliverDue,
    /** One round: fan out, then deliver. */
    async tick(): Promise<{ queued: number; attempted: number }> {
      const queued = await fanOut();
      const attempted = await deliverDue();
      return { queued, attempted };
    },
  };
}
export type NotifySender = ReturnType<typeof createNotifySender>;
