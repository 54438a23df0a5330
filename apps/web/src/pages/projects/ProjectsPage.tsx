// Projects: git repositories whose playbooks runs use, with the commit each was last synced to.
import { Link } from 'wouter';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { LoadError } from '../../ui/forms';
import { EmptyState, LoadMore, Loading, PageHeader } from '../../ui/layout';
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
      {list.error ? <LoadError error={list.error} /> : null}
      {list.isLoading ? (
        <Loading what="Loading projects" />
      ) : list.items.length === 0 && !list.error ? (
        <EmptyState title="No projects yet">
          {canCreate
            ? 'Register a git repository with “New project”; Baton records its branch head and runs playbooks from it.'
            : 'Ask an operator to register a project, or to grant you access to one.'}
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Projects</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Git URL</th>
                <th scope="col">Branch</th>
                <th scope="col">Last commit</th>
                <th scope="col">Synced</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {list.items.map((p) => (
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
              ))}
            </tbody>
          </table>
        </div>
      )}
      <LoadMore hasMore={list.hasMore} loading={list.loadingMore} onClick={list.loadMore} />
    </>
  );
}
