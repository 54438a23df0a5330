// One template: what it launches, its survey, who may use it, and its runs.
import type { Notifier, SubmitPipelineBody, SubmitRunBody, Template, User } from '@baton/contracts';
import { Link, useParams } from 'wouter';
import { useApi } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { AccessPanel } from '../../ui/AccessPanel';
import { FormError } from '../../ui/forms';
import { Details, EmptyState, PageHeader } from '../../ui/layout';
import { DeleteButton, NotLoaded, useDeleteObject } from '../../ui/ObjectPage';
import { Time } from '../../ui/Time';
import { ObjectRuns } from '../runs/ObjectRuns';
import { PipelineSpecSummary, RunSpecSummary } from './spec/SpecSummary';
import { QUESTION_TYPES, SECRET_PLACEHOLDER } from './survey/surveyDraft';
import './spec/launch.css';

export default function TemplatePage() {
  const { id } = useParams<{ id: string }>();
  const canCreate = useHasRole('operator');
  const q = useApi<Template>(`/v1/templates/${id}`);
  const owner = useApi<User>(q.data ? `/v1/users/${q.data.created_by}` : null, { retry: false });
  const remove = useDeleteObject('templates', id);
  if (!q.data) return <NotLoaded error={q.error} what="Loading the template" />;
  const t = q.data;
  return (
    <>
      <PageHeader
        title={t.name}
        subtitle={t.description ?? `A ${t.kind} template`}
        actions={
          canCreate ? (
            <div className="actions-row">
              <Link href={`/templates/${t.id}/launch`} className="btn btn-primary">
                Launch
              </Link>
              <Link href={`/templates/${t.id}/edit`} className="btn">
                Edit
              </Link>
              <DeleteButton
                remove={remove}
                question={`Delete the template ${t.name}?`}
                detail="Its grants go with it; runs it launched stay. Schedules and triggers that launch it must be changed first."
              />
            </div>
          ) : null
        }
      />
      <FormError error={remove.error} />
      <Details
        items={[
          ['Kind', t.kind === 'pipeline' ? 'pipeline' : 'run'],
          ['Owner', owner.data?.username ?? t.created_by],
          ['Overrides allowed', t.allow_overrides.length ? t.allow_overrides.join(', ') : 'none'],
          ['Created', <Time key="c" at={t.created_at} />],
          ['Updated', <Time key="u" at={t.updated_at} />],
        ]}
      />
      <h2>What it launches</h2>
      {t.kind === 'pipeline' ? (
        <PipelineSpecSummary spec={t.spec as Partial<SubmitPipelineBody>} />
      ) : (
        <RunSpecSummary spec={t.spec as Partial<SubmitRunBody>} />
      )}
      <h2>Survey</h2>
      <SurveyTable template={t} />
      <TemplateNotifiers templateId={t.id} />
      <AccessPanel objectId={t.id} />
      <h2>Runs</h2>
      <ObjectRuns
        filter={{ template: t.id }}
        caption="Runs of this template"
        empty={<EmptyState title="Not launched yet">Launch it to start a run; its runs are listed here.</EmptyState>}
        columns={[{ head: 'Origin', cell: (r) => r.origin }]}
      />
    </>
  );
}

function SurveyTable({ template }: { template: Template }) {
  const survey = template.survey ?? [];
  if (!survey.length) return <p className="muted">No survey: launching asks nothing.</p>;
  const typeWords = Object.fromEntries(QUESTION_TYPES.map((t) => [t.type, t.label]));
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Survey questions</caption>
        <thead>
          <tr>
            <th scope="col">Question</th>
            <th scope="col">Variable</th>
            <th scope="col">Type</th>
            <th scope="col">Required</th>
            <th scope="col">Default</th>
            <th scope="col">Bounds / choices</th>
          </tr>
        </thead>
        <tbody>
          {survey.map((q) => (
            <tr key={q.variable}>
              <td>{q.question}</td>
              <td className="mono">{q.variable}</td>
              <td>{typeWords[q.type] ?? q.type}</td>
              <td>{q.required ? 'yes' : 'no'}</td>
              <td>
                {q.default === undefined ? (
                  '—'
                ) : q.default === SECRET_PLACEHOLDER && q.type === 'password' ? (
                  <span className="muted">set (hidden)</span>
                ) : (
                  <code>{JSON.stringify(q.default)}</code>
                )}
              </td>
              <td>
                {q.choices?.length
                  ? q.choices.join(', ')
                  : q.min !== undefined || q.max !== undefined
                    ? `${q.min ?? ''}–${q.max ?? ''}`
                    : '—'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The notifiers that hear of this template's runs (those naming it, and those that hear of every run). */
function TemplateNotifiers({ templateId }: { templateId: string }) {
  const q = useApi<Notifier[]>(`/v1/notifiers?template=${templateId}`);
  return (
    <section aria-labelledby="notifiers-h">
      <h2 id="notifiers-h">Notifications</h2>
      {q.data && q.data.length === 0 ? (
        <p className="muted">
          No notifier you can see hears of this template's runs. <Link href="/notifiers/new">Add one</Link>
        </p>
      ) : (
        <ul data-testid="template-notifiers">
          {(q.data ?? []).map((n) => (
            <li key={n.id}>
              <Link href={`/notifiers/${n.id}`}>{n.name}</Link> <span className="mono">{n.events.join(', ')}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
