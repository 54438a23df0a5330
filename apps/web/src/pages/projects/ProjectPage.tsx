// One project: where it comes from, the commit runs use, sync now (with the Galaxy requirements found at the synced
// commit), the SSH host keys of its git server, its recent runs.
import { Link, useParams } from 'wouter';
import { qs } from '../../api/client';
import { useApi, useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { AccessPanel, useCanManage } from '../../ui/AccessPanel';
import { ErrorBanner } from '../../ui/forms';
import { Details, EmptyState, PageHeader } from '../../ui/layout';
import { DeleteButton, NotLoaded, useDeleteObject } from '../../ui/ObjectPage';
import { Time } from '../../ui/Time';
import { HOST_KEY_CHECKING } from '../known-hosts/host-key-checking';
import { HOST_KEYS_ANCHOR, HostKeysSection } from '../known-hosts/HostKeysSection';
import { gitSshHost } from '../known-hosts/ssh-host';
import { ObjectRuns } from '../runs/ObjectRuns';
import { DeleteError, ObjectLink } from './objects';
import { Requirements } from './Requirements';
import { ShortCommit, SyncBadge } from './sync';
import type { Project, ProjectSyncResult } from './types';
import './inputs.css';

export default function ProjectPage() {
  const { id } = useParams<{ id: string }>();
  const canSync = useHasRole('operator');
  const canManage = useCanManage(id);
  const q = useApi<Project>(`/v1/projects/${id}`);
  const sync = useApiMutation<void, ProjectSyncResult>('POST', `/v1/projects/${id}/sync`, {
    invalidate: ['/v1/projects'],
  });
  const remove = useDeleteObject('projects', id);
  const project = q.data;
  if (q.error || !project) return <NotLoaded error={q.error} what="Loading the project" />;
  const sshHost = gitSshHost(project.git_url);
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
          {/host key/i.test(sync.error.problem.detail ?? '') ? (
            <p>
              If the server’s key changed on purpose, check its new key and pin it under{' '}
              <a href={`#${HOST_KEYS_ANCHOR}`}>Host keys</a>.
            </p>
          ) : null}
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
          [
            'Galaxy server',
            project.galaxy_credential_id ? (
              <ObjectLink kind="credentials" id={project.galaxy_credential_id} />
            ) : (
              <span className="muted">ansible-galaxy’s default</span>
            ),
          ],
          [
            'Host key checking',
            sshHost ? (
              <a href={`#${HOST_KEYS_ANCHOR}`}>{HOST_KEY_CHECKING[project.host_key_checking].label}</a>
            ) : (
              <span>
                {HOST_KEY_CHECKING[project.host_key_checking].label}{' '}
                <span className="muted">(applies to git over SSH only)</span>
              </span>
            ),
          ],
          ['Created', <Time at={project.created_at} />],
          ['Updated', <Time at={project.updated_at} />],
        ]}
      />
      {sync.isSuccess && sync.data.requirements !== undefined ? (
        <Requirements requirements={sync.data.requirements} commit={sync.data.last_commit} />
      ) : null}
      <HostKeysSection
        scope="projects"
        ownerId={project.id}
        ownerName={project.name}
        canManage={canManage}
        suggestHost={sshHost}
        relevant={sshHost !== undefined}
        note={
          sshHost
            ? undefined
            : 'This repository is not reached over SSH: its host keys matter only once its URL is an SSH one.'
        }
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
