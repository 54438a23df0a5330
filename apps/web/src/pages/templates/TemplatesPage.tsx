// Templates: saved launch presets (a run or a pipeline, a survey, what a launcher may override).
import type { Template } from '@baton/contracts';
import { Link } from 'wouter';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
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
      <PagedTable
        list={list}
        what="Loading templates"
        caption="Templates"
        empty={
          <EmptyState title="No templates yet">
            {canCreate
              ? 'Save a run or pipeline as a template with “New template”; add a survey to ask launchers for values.'
              : 'Ask an operator to create a template, or to grant you use of one.'}
          </EmptyState>
        }
        head={
          <>
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
          </>
        }
        row={(t) => (
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
                <Link href={`/templates/${t.id}/launch`} className="btn btn-small" aria-label={`Launch ${t.name}`}>
                  Launch
                </Link>
              </td>
            ) : null}
          </tr>
        )}
      />
    </>
  );
}
