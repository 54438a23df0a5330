// Composes the notifications domain: the notifier service, and the sender every replica runs with the real
// transports (webhook, Slack-compatible, SMTP).
import os from 'node:os';
import {
  type Authorizer,
  type Clock,
  createNotifierService,
  createNotifySender,
  type Keyring,
  type NotifyTransport,
  type RunAccess,
} from '@baton/core';
import type { Database } from '@baton/db';
import { createNotifyTransport } from './delivery/transport.js';

export interface NotifierWiringOptions {
  authz: Authorizer;
  clock: Clock;
  keyring: Keyring;
  runAccess: Pick<RunAccess, 'canSee'>;
  publicUrl: string;
  /** BATON_NOTIFY_ALLOW_PRIVATE: let notifications reach private and loopback addresses */
  allowPrivate?: boolean | undefined;
  /** tests may put their own transport in (the real ones are the default) */
  transport?: NotifyTransport | undefined;
}

export function createNotifierServices(db: Database, opts: NotifierWiringOptions) {
  const { repos, transaction } = db;
  const notifiers = createNotifierService({
    notifiers: repos.notifiers,
    transaction,
    authz: opts.authz,
    keyring: opts.keyring,
    clock: opts.clock,
  });

  /** The e-mail addresses of whoever may approve a held run: its policies' approver users and team members. */
  async function approverEmails(runId: string): Promise<string[]> {
    const run = await repos.runs.findById(runId);
    const userIds = new Set<string>();
    for (const policy of run?.hold_policies ?? []) {
      for (const id of policy.approvers.users ?? []) userIds.add(id);
      for (const team of policy.approvers.teams ?? [])
        for (const m of await repos.teams.listMembers(team, { limit: 500 })) userIds.add(m.user_id);
    }
    const emails: string[] = [];
    for (const id of userIds) {
      const email = (await repos.users.findById(id))?.email;
      if (email) emails.push(email);
    }
    return emails;
  }

  const notifySender = createNotifySender({
    notifiers: repos.notifiers,
    runs: repos.runs,
    schedules: repos.schedules,
    templates: repos.templates,
    projects: repos.projects,
    users: repos.users,
    transaction,
    canSee: async (p, runId) => {
      const run = await repos.runs.findById(runId);
      return run !== undefined && (await opts.runAccess.canSee(p, run));
    },
    secretsOf: notifiers.secretsOf,
    transport: opts.transport ?? createNotifyTransport({ allowPrivate: opts.allowPrivate ?? false }),
    clock: opts.clock,
    holder: `${os.hostname()}/${process.pid}`,
    publicUrl: opts.publicUrl,
    approverEmails,
  });
  return { notifiers, notifySender };
}
