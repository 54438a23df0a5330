// Projects: git repositories whose playbooks runs use, with the commit each was last synced to.
import { Link } from 'wouter';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';
import { ShortCommit, SyncBadge } from './sync';
import type { Project } from './types';
import './inputs.css';

export default function ProjectsPage() {
  const canCreate = useHasRole('operator');
  const list = usePagedList<Project>('/v1/projects');
  return (
    <>
      <PageHeader
        title="Projects"
        subtitle="Git repositories holding playbooks. Runs use the commit recorded at the last sync."
        actions={
          canCreate ? (
            <Link href="/projects/new" className="btn btn-primary">
              New project
            </Link>
          ) : null
        }
      />
      <PagedTable
        list={list}
        what="Loading projects"
        caption="Projects"
        empty={
          <EmptyState title="No projects yet">
            {canCreate
              ? 'Register a git repository with “New project”; Baton records its branch head and runs playbooks from it.'
              : 'Ask an operator to register a project, or to grant you access to one.'}
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Name</th>
            <th scope="col">Git URL</th>
            <th scope="col">Branch</th>
            <th scope="col">Last commit</th>
            <th scope="col">Synced</th>
            <th scope="col">Status</th>
          </>
        }
        row={(p) => (
          <tr key={p.id}>
            <td>
              <Link href={`/projects/${p.id}`}>{p.name}</Link>
            </td>
            <td className="mono wrap-anywhere url-cell">{p.git_url}</td>
            <td className="mono">{p.branch}</td>
            <td>
              <ShortCommit commit={p.last_commit} />
            </td>
            <td>
              <Time at={p.synced_at} empty="never" />
            </td>
            <td>
              <SyncBadge project={p} />
            </td>
          </tr>
        )}
      />
    </>
  );
}
