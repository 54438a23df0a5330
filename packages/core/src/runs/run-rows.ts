// Building run rows: the checks of submit inputs that need no lookup, and the fields every new run starts with.
import type { RunRow } from '@baton/db';
import type { Principal } from '../authz/authorize.js';
import { ValidationError } from '../common/errors.js';

/** The credential types a run may use: ssh keys into the agent, become and vault passwords through FIFOs, env. */
export const RUN_CREDENTIAL_TYPES = ['ssh_key', 'become_password', 'vault_password', 'env'] as const;

/** The state of a run that has not started: what a submitted run, a retry and each shard begin with. */
export function freshRunState(
  p: Principal,
  at: string,
): Pick<
  RunRow,
  | 'status'
  | 'conclusion'
  | 'reason'
  | 'submitted_by'
  | 'worker'
  | 'exit_code'
  | 'stats'
  | 'last_seq'
  | 'log_lines'
  | 'log_bytes'
  | 'output_truncated'
  | 'created_at'
  | 'started_at'
  | 'finished_at'
  | 'cancel_requested_at'
  | 'held_by'
  | 'hold_policies'
  | 'hold_expires_at'
  | 'output_pruned_at'
> {
  return {
    status: 'pending',
    conclusion: null,
    reason: null,
    submitted_by: p.id,
    worker: null,
    exit_code: null,
    stats: null,
    last_seq: 0,
    log_lines: 0,
    log_bytes: 0,
    output_truncated: 0,
    created_at: at,
    started_at: null,
    finished_at: null,
    cancel_requested_at: null,
    held_by: null,
    hold_policies: null,
    hold_expires_at: null,
    output_pruned_at: null,
  };
}

const invalid = (path: string, message: string) => new ValidationError(`${path} ${message}`, [{ path, message }]);

/**
 * A playbook path inside a project, as the executor checks it too: relative, no `..` segment; `.` segments,
 * doubled and trailing slashes dropped. 400 at body.playbook otherwise.
 */
export function projectPlaybookPath(given: string): string {
  if (given.startsWith('/')) throw invalid('body.playbook', 'must be a path relative to the project root');
  if (/[\0\\]/.test(given)) throw invalid('body.playbook', 'must not contain NUL or backslash characters');
  const segments = given.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw invalid('body.playbook', 'must not contain a ".." segment');
  if (segments.length === 0) throw invalid('body.playbook', 'names no file');
  return segments.join('/');
}

/**
 * `@file` in a `--limit` makes ansible read host names from a file on this server and echo unmatched lines in
 * its warnings: refused wherever it stands among the comma- or colon-separated parts (400 at body.limit).
 */
export function checkHostLimit(limit: string | undefined): void {
  if (limit !== undefined && /(^|[,:])\s*@/.test(limit))
    throw invalid('body.limit', 'must not read hosts from a file (@…)');
}

/** 400 at body.credential_ids.<i> for the second mention of an id. */
export function checkNoDuplicateCredentials(ids: readonly string[]): void {
  const i = ids.findIndex((id, index) => ids.indexOf(id) !== index);
  if (i >= 0) throw invalid(`body.credential_ids.${i}`, `lists ${ids[i]} a second time`);
}

/** Shard k of n gets hosts[k::n] of the hosts sorted by name. */
export function shardHosts(sortedHosts: readonly string[], n: number): string[][] {
  return Array.from({ length: n }, (_, k) => sortedHosts.filter((_, i) => i % n === k));
}

/** A parent whose children run instead of it: a split, or a pipeline step split into shards. */
export const hasShards = (row: Pick<RunRow, 'kind' | 'shard_count'>): boolean =>
  row.kind === 'split' || (row.kind === 'step' && row.shard_count !== null);

/** Whether an executor runs this row itself: an ordinary run, a shard, or a step that is not split. */
export const isDispatchable = (row: Pick<RunRow, 'kind' | 'shard_count'>): boolean =>
  row.kind === 'run' || row.kind === 'shard' || (row.kind === 'step' && row.shard_count === null);
