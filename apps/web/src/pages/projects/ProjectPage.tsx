// One project: where it comes from, the commit runs use, sync now, its recent runs.
import { Link, useParams } from 'wouter';
import { qs } from '../../api/client';
import { useApi, useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { AccessPanel, useCanManage } from '../../ui/AccessPanel';
import { ErrorBanner } from '../../ui/forms';
import { Details, EmptyState, PageHeader } from '../../ui/layout';
import { DeleteButton, NotLoaded, useDeleteObject } from '../../ui/ObjectPage';
import { Time } from '../../ui/Time';
import { ObjectRuns } from '../runs/ObjectRuns';
import { DeleteError, ObjectLink } from './objects';
import { ShortCommit, SyncBadge } from './sync';
import type { Project } from './types';
import './inputs.css';

export default function ProjectPage() {
  const { id } = useParams<{ id: string }>();
  const canSync = useHasRole('operator');
  const canManage = useCanManage(id);
  const q = useApi<Project>(`/v1/projects/${id}`);
  const sync = useApiMutation<void, Project>('POST', `/v1/projects/${id}/sync`, { invalidate: ['/v1/projects'] });
  const remove = useDeleteObject('projects', id);
  const project = q.data;
  if (q.error || !project) return <NotLoaded error={q.error} what="Loading the project" />;
  return (
    <>
      <PageHeader
        title={project.name}
        subtitle={<span className="mono wrap-anywhere">{project.git_url}</span>}
        actions={
          <>
            {canSync ? (
              <button type="button" className="btn btn-primary" disabled={sync.isPending} onClick={() => sync.mutate()}>
                {sync.isPending ? 'Syncing…' : 'Sync'}
              </button>
            ) : null}
            {canManage ? (
              <>
                <Link href={`/projects/${id}/edit`} className="btn">
                  Edit
                </Link>
                <DeleteButton
                  remove={remove}
                  question={`Delete the project ${project.name}?`}
                  detail="Its grants go with it. Runs that used it keep their record."
                />
              </>
            ) : null}
          </>
        }
      />
      {sync.isSuccess ? (
        <div className="banner banner-info" role="status" data-testid="sync-result">
          Synced: branch {sync.data.branch} is at <ShortCommit commit={sync.data.last_commit} />.
        </div>
      ) : null}
      {sync.error ? (
        <ErrorBanner title="Sync failed">
          <p data-testid="sync-error">{sync.error.problem.detail ?? sync.error.message}</p>
        </ErrorBanner>
      ) : null}
      <DeleteError error={remove.error} />
      <Details
        items={[
          ['Status', <SyncBadge project={project} />],
          ['Branch', <span className="mono">{project.branch}</span>],
          ['Last commit', <ShortCommit commit={project.last_commit} />],
          ['Synced', <Time at={project.synced_at} empty="never" />],
          ['Credential', <ObjectLink kind="credentials" id={project.credential_id} />],
          ['Created', <Time at={project.created_at} />],
          ['Updated', <Time at={project.updated_at} />],
        ]}
      />
      <RecentRuns projectId={project.id} />
      <AccessPanel objectId={project.id} />
    </>
  );
}

function RecentRuns({ projectId }: { projectId: string }) {
  return (
    <section aria-labelledby="recent-runs">
      <div className="section-actions">
        <h2 id="recent-runs">Recent runs</h2>
        <Link href={`/runs${qs({ project: projectId })}`}>All runs of this project</Link>
      </div>
      <ObjectRuns
        filter={{ project: projectId }}
        latest={5}
        caption="Recent runs of this project"
        empty={
          <EmptyState title="No runs from this project yet">
            Launch one from Runs or a template that uses this project.
          </EmptyState>
        }
        columns={[
          { head: 'Playbook', className: 'mono', cell: (r) => r.playbook },
          { head: 'Commit', cell: (r) => <ShortCommit commit={r.commit} /> },
        ]}
      />
    </section>
  );
}
