// Templates: saved launch presets (a run or a pipeline, a survey, what a launcher may override).
import type { Template } from '@baton/contracts';
import { Link } from 'wouter';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { LoadError } from '../../ui/forms';
import { EmptyState, LoadMore, Loading, PageHeader } from '../../ui/layout';
import { Time } from '../../ui/Time';
import './spec/launch.css';

export default function TemplatesPage() {
  const canCreate = useHasRole('operator');
  const list = usePagedList<Template>('/v1/templates');
  return (
    <>
      <PageHeader
        title="Templates"
        subtitle="Saved runs and pipelines, launched with a survey's answers on their owner's authority."
        actions={
          canCreate ? (
            <Link href="/templates/new" className="btn btn-primary">
              New template
            </Link>
          ) : null
        }
      />
      {list.error ? <LoadError error={list.error} /> : null}
      {list.isLoading ? (
        <Loading what="Loading templates" />
      ) : list.items.length === 0 && !list.error ? (
        <EmptyState title="No templates yet">
          {canCreate
            ? 'Save a run or pipeline as a template with “New template”; add a survey to ask launchers for values.'
            : 'Ask an operator to create a template, or to grant you use of one.'}
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Templates</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Survey</th>
                <th scope="col">Overrides allowed</th>
                <th scope="col">Updated</th>
                {canCreate ? (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {list.items.map((t) => (
                <tr key={t.id}>
                  <td>
                    <Link href={`/templates/${t.id}`}>{t.name}</Link>
                    {t.description ? <div className="muted">{t.description}</div> : null}
                  </td>
                  <td>{t.kind === 'pipeline' ? 'pipeline' : 'run'}</td>
                  <td>{t.survey?.length ? `${t.survey.length} question${t.survey.length === 1 ? '' : 's'}` : '—'}</td>
                  <td>{t.allow_overrides.length ? t.allow_overrides.join(', ') : '—'}</td>
                  <td>
                    <Time at={t.updated_at} />
                  </td>
                  {canCreate ? (
                    <td>
                      <Link
                        href={`/templates/${t.id}/launch`}
                        className="btn btn-small"
                        aria-label={`Launch ${t.name}`}
                      >
                        Launch
                      </Link>
                    </td>
                  ) : null}
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
