// A project's sync state, in the look of every other status badge (icon + word + tone).
import { Badge } from '../../ui/Status';
import type { Project } from './types';

export function SyncBadge({ project }: { project: Project }) {
  const synced = project.last_commit !== null;
  return (
    <Badge
      tone={synced ? 'ok' : 'muted'}
      icon={synced ? 'check' : 'ring'}
      label={synced ? 'Synced' : 'Never synced'}
      data={{ sync: synced ? 'synced' : 'never' }}
    />
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
