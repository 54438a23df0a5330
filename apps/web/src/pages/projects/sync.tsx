// A project's sync state, in the look of every other status badge (icon + word + tone).
import type { Project } from './types';

export function SyncBadge({ project }: { project: Project }) {
  const synced = project.last_commit !== null;
  return (
    <span className={`status status-${synced ? 'ok' : 'muted'}`} data-sync={synced ? 'synced' : 'never'}>
      <span className="status-icon" aria-hidden="true">
        {synced ? '✓' : '○'}
      </span>
      {synced ? 'Synced' : 'Never synced'}
    </span>
  );
}

/** The first 10 characters of a commit id, full id in the tooltip. */
export function ShortCommit({ commit }: { commit: string | null }) {
  if (!commit) return <span className="muted">—</span>;
  return (
    <code title={commit} data-commit={commit}>
      {commit.slice(0, 10)}
    </code>
  );
}
