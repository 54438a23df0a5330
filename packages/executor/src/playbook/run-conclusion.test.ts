// Every rule for how a run ends, as tables, without ansible. Exit codes are ansible-playbook's: 0 ok, 1 error,
// 2 a host failed, 3 a host unreachable, 4 parser error (and, from the task queue, unreachable hosts), 5 bad
// options, 8 a play broke off (any_errors_fatal, max_fail_percentage), 99 interrupted, 250 unexpected error;
// null when a signal killed it.
import { describe, expect, it } from '@jest/globals';
import type { HostStats } from './run-event-stream.js';
import {
  canceledFor,
  concludeFrom,
  concludeThrown,
  RunRefused,
  type RunVerdict,
  ShutdownAbort,
  stoppedLine,
  WorkerLostAbort,
} from './run-conclusion.js';
import type { AnsibleResult } from './run-process.js';

const counts = (some: Partial<HostStats>): HostStats => ({
  ok: 0,
  changed: 0,
  failed: 0,
  unreachable: 0,
  skipped: 0,
  rescued: 0,
  ignored: 0,
  ...some,
});

/** Every host fine, with every count that is no failure set somewhere (ignored errors and rescued tasks included). */
const healthy = { web1: counts({ ok: 3, changed: 1 }), web2: counts({ ok: 2, skipped: 1, rescued: 1, ignored: 2 }) };
const oneFailed = { web1: counts({ ok: 3 }), web2: counts({ ok: 1, failed: 1 }) };
const oneUnreachable = { web1: counts({ ok: 3 }), web2: counts({ unreachable: 1 }) };
const noHostMatched = {};

/** A user's cancel, as AbortController.abort() with no argument gives it. */
const userCancel = (() => {
  const c = new AbortController();
  c.abort();
  return c.signal.reason as unknown;
})();

const succeeded: RunVerdict = { conclusion: 'succeeded' };
const failed: RunVerdict = { conclusion: 'failed' };
const badPlaybook: RunVerdict = { conclusion: 'failed', reason: 'bad_playbook' };
const ansibleError: RunVerdict = { conclusion: 'error', reason: 'ansible_error' };
const canceled: RunVerdict = { conclusion: 'canceled', reason: 'canceled' };
const shutdown: RunVerdict = { conclusion: 'canceled', reason: 'shutdown' };
const workerLost: RunVerdict = { conclusion: 'error', reason: 'worker_lost' };
const timedOut: RunVerdict = { conclusion: 'error', reason: 'timeout' };

const ran = (exitCode: number | null): AnsibleResult => ({ exitCode });

describe('concludeFrom: a run ansible ran to its end, with playbook_on_stats', () => {
  it.each<[string, AnsibleResult, Record<string, HostStats>, RunVerdict]>([
    ['exit 0, every host fine', ran(0), healthy, succeeded],
    ['exit 0, no host matched', ran(0), noHostMatched, succeeded],
    // The stats overrule an exit code that says all went well.
    ['exit 0, but a host failed in the stats', ran(0), oneFailed, failed],
    ['exit 0, but a host was unreachable in the stats', ran(0), oneUnreachable, failed],
    ['exit 2, a host failed', ran(2), oneFailed, failed],
    // Exit 4 with stats is an unreachable host, not a parser error: no bad_playbook.
    ['exit 4, a host unreachable', ran(4), oneUnreachable, failed],
    ['exit 3, a host unreachable', ran(3), oneUnreachable, failed],
    ['exit 8, a play broke off', ran(8), oneFailed, failed],
    // A non-zero exit overrules stats that look fine: something failed that the counts do not show.
    ['exit 1, stats fine', ran(1), healthy, failed],
    ['exit 2, stats fine', ran(2), healthy, failed],
    ['exit 4, stats fine', ran(4), healthy, failed],
    ['exit 5, stats fine', ran(5), healthy, failed],
    ['exit 99 (interrupted, not by Baton), stats fine', ran(99), healthy, failed],
    ['exit 250, a host failed', ran(250), oneFailed, failed],
    ['killed by a signal Baton did not send, stats fine', ran(null), healthy, failed],
    ['killed by a signal Baton did not send, no host matched', ran(null), noHostMatched, failed],
  ])('%s', (_, result, stats, verdict) => {
    expect(concludeFrom(result, stats, undefined)).toEqual(verdict);
  });
});

describe('concludeFrom: a run without playbook_on_stats (ansible stopped before any play)', () => {
  it.each<[string, AnsibleResult, RunVerdict]>([
    ['exit 0', ran(0), succeeded],
    ['exit 4: the playbook or inventory does not parse', ran(4), badPlaybook],
    ['exit 1', ran(1), ansibleError],
    ['exit 2', ran(2), ansibleError],
    ['exit 3', ran(3), ansibleError],
    ['exit 5: bad options', ran(5), ansibleError],
    ['exit 8', ran(8), ansibleError],
    ['exit 99: interrupted, not by Baton', ran(99), ansibleError],
    ['exit 250: unexpected error', ran(250), ansibleError],
    ['killed by a signal Baton did not send', ran(null), ansibleError],
  ])('%s', (_, result, verdict) => {
    expect(concludeFrom(result, undefined, undefined)).toEqual(verdict);
  });
});

describe('concludeFrom: a run Baton stopped', () => {
  it.each<[string, AnsibleResult, Record<string, HostStats> | undefined, unknown, RunVerdict]>([
    [
      "a user's cancel, ansible gone by SIGINT",
      { exitCode: 99, stoppedFor: 'canceled' },
      undefined,
      userCancel,
      canceled,
    ],
    ["a user's cancel, ansible killed", { exitCode: null, stoppedFor: 'canceled' }, undefined, userCancel, canceled],
    // A cancel wins over whatever ansible managed before it stopped.
    [
      "a user's cancel, after ansible exited 0 with fine stats",
      { exitCode: 0, stoppedFor: 'canceled' },
      healthy,
      userCancel,
      canceled,
    ],
    ["a user's cancel, a host failed before", { exitCode: 2, stoppedFor: 'canceled' }, oneFailed, userCancel, canceled],
    ['a cancel whose reason is no error', { exitCode: null, stoppedFor: 'canceled' }, undefined, 'stop', canceled],
    ['a cancel with no reason', { exitCode: null, stoppedFor: 'canceled' }, undefined, undefined, canceled],
    ["the server's shutdown", { exitCode: 99, stoppedFor: 'canceled' }, healthy, new ShutdownAbort(), shutdown],
    [
      "the server's shutdown, its reason from another realm",
      { exitCode: null, stoppedFor: 'canceled' },
      undefined,
      { name: 'ShutdownAbort' },
      shutdown,
    ],
    [
      'the worker lost its lease',
      { exitCode: null, stoppedFor: 'canceled' },
      oneFailed,
      new WorkerLostAbort(),
      workerLost,
    ],
    [
      'the worker lost its lease, its reason from another realm',
      { exitCode: 99, stoppedFor: 'canceled' },
      undefined,
      { name: 'WorkerLostAbort' },
      workerLost,
    ],
    ['the timeout', { exitCode: null, stoppedFor: 'timeout' }, undefined, undefined, timedOut],
    [
      'the timeout, after ansible exited 0 with fine stats',
      { exitCode: 0, stoppedFor: 'timeout' },
      healthy,
      undefined,
      timedOut,
    ],
    ['the timeout, a host failed before', { exitCode: 99, stoppedFor: 'timeout' }, oneFailed, undefined, timedOut],
    // The signal's reason matters only to a cancel: a run that timed out is not a shutdown or a lost lease.
    [
      'the timeout, while the signal says shutdown',
      { exitCode: null, stoppedFor: 'timeout' },
      undefined,
      new ShutdownAbort(),
      timedOut,
    ],
    [
      'the timeout, while the signal says lease lost',
      { exitCode: null, stoppedFor: 'timeout' },
      undefined,
      new WorkerLostAbort(),
      timedOut,
    ],
  ])('%s', (_, result, stats, abortReason, verdict) => {
    expect(concludeFrom(result, stats, abortReason)).toEqual(verdict);
  });

  it('a reason that only looks like a shutdown or a lost lease in its message is a plain cancel', () => {
    expect(
      concludeFrom({ exitCode: null, stoppedFor: 'canceled' }, undefined, new Error('ShutdownAbort WorkerLostAbort')),
    ).toEqual(canceled);
  });
});

describe('canceledFor: a run canceled before ansible started', () => {
  it.each<[string, unknown, RunVerdict]>([
    ["a user's cancel", userCancel, canceled],
    ['an error of another name', new Error('stop'), canceled],
    ['a reason that is no object', 'stop', canceled],
    ['a null reason', null, canceled],
    ["the server's shutdown", new ShutdownAbort(), shutdown],
    ['the worker lost its lease', new WorkerLostAbort(), workerLost],
  ])('%s', (_, abortReason, verdict) => {
    expect(canceledFor(abortReason)).toEqual(verdict);
  });
});

describe('concludeThrown: a run that broke off before it concluded', () => {
  it.each<[string, unknown, RunVerdict]>([
    [
      'a playbook path outside the project',
      new RunRefused('failed', 'bad_playbook', 'baton: the playbook path "../x.yml" is not inside the project'),
      badPlaybook,
    ],
    [
      'a checkout that failed',
      new RunRefused('error', 'checkout_failed', 'baton: cannot check out the project'),
      { conclusion: 'error', reason: 'checkout_failed' },
    ],
    [
      'an ssh key the agent refused',
      new RunRefused('error', 'bad_credential', 'baton: bad key'),
      { conclusion: 'error', reason: 'bad_credential' },
    ],
    [
      "an error of Baton's own",
      new Error('EACCES: permission denied'),
      { conclusion: 'error', reason: 'executor_error' },
    ],
    ['a thrown value that is no error', 'broken', { conclusion: 'error', reason: 'executor_error' }],
    // Only a real refusal decides its own verdict: an error merely shaped like one is Baton's fault.
    [
      'an object shaped like a refusal',
      { conclusion: 'succeeded', reason: 'bad_playbook', message: 'x' },
      { conclusion: 'error', reason: 'executor_error' },
    ],
  ])('%s', (_, err, verdict) => {
    expect(concludeThrown(err)).toEqual(verdict);
  });
});

describe("stoppedLine: the log's last word when Baton stopped ansible", () => {
  it.each<[string, AnsibleResult['stoppedFor'], RunVerdict, number | undefined, string | undefined]>([
    ['not stopped: nothing to say', undefined, failed, undefined, undefined],
    ['not stopped, though canceled before ansible started', undefined, canceled, undefined, undefined],
    ['the timeout', 'timeout', timedOut, 30, 'baton: the run exceeded its timeout of 30 s and was stopped'],
    ["a user's cancel", 'canceled', canceled, 30, 'baton: the run was canceled'],
    [
      "the server's shutdown",
      'canceled',
      shutdown,
      undefined,
      'baton: the run was stopped: the server is shutting down',
    ],
    [
      'the worker lost its lease',
      'canceled',
      workerLost,
      undefined,
      'baton: the run was stopped: this worker lost its lease on the run',
    ],
  ])('%s', (_, stoppedFor, verdict, timeoutS, line) => {
    expect(stoppedLine(stoppedFor, verdict, timeoutS)).toBe(line);
  });
});
