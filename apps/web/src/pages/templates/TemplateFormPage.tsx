// Creating and editing a template: name, kind (a run or a pipeline), its spec, what a launcher may override, and the
// survey. The server checks the spec as a submission would (without running it) and answers at `spec.<field>`.
import type { OverridableField, SubmitPipelineBody, SubmitRunBody, Template } from '@baton/contracts';
import { type FormEvent, useState } from 'react';
import { Link, useLocation, useParams } from 'wouter';
import { useApi, useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { PageHeader } from '../../ui/layout';
import { NotAllowed } from '../../ui/NotAllowed';
import { NotLoaded } from '../../ui/ObjectPage';
import { PipelineFields } from '../pipelines/PipelineFields';
import {
  emptyPipelineDraft,
  type PipelineDraft,
  pipelineDraftFrom,
  pipelineSpecFrom,
} from '../pipelines/pipelineDraft';
import { FieldGroup } from './spec/FieldGroup';
import { emptyRunDraft, type LocalErrors, type RunDraft, runDraftFrom, runSpecFrom } from './spec/runDraft';
import { RunSpecFields } from './spec/RunSpecFields';
import { SurveyEditor } from './survey/SurveyEditor';
import { type QuestionDraft, questionDraftFrom, questionFrom } from './survey/surveyDraft';
import './spec/launch.css';

/** The fields a template may let its launcher change, in words. */
export const OVERRIDE_WORDS: Record<OverridableField, string> = {
  limit: 'Limit',
  extra_vars: 'Extra vars',
  inventory_id: 'Inventory',
  credential_ids: 'Credentials',
  check: 'Check mode',
  verbosity: 'Verbosity',
  labels: 'Worker labels',
  shards: 'Shards',
  ref: 'Ref',
};

export default function TemplateFormPage() {
  const { id } = useParams<{ id?: string }>();
  const canCreate = useHasRole('operator');
  const existing = useApi<Template>(id ? `/v1/templates/${id}` : null);
  if (!canCreate)
    return (
      <NotAllowed title={id ? 'Edit template' : 'New template'}>
        Templates are created and changed by operators and admins. <Link href="/templates">Back to templates</Link>
      </NotAllowed>
    );
  if (id && !existing.data) return <NotLoaded error={existing.error} what="Loading the template" />;
  return <TemplateForm key={id ?? 'new'} template={existing.data} />;
}

function TemplateForm({ template }: { template?: Template }) {
  const [, navigate] = useLocation();
  const [name, setName] = useState(template?.name ?? '');
  const [description, setDescription] = useState(template?.description ?? '');
  const [kind, setKind] = useState<'run' | 'pipeline'>(template?.kind ?? 'run');
  const [run, setRun] = useState<RunDraft>(() =>
    template?.kind === 'run' ? runDraftFrom(template.spec as Partial<SubmitRunBody>) : emptyRunDraft(),
  );
  const [pipeline, setPipeline] = useState<PipelineDraft>(() =>
    template?.kind === 'pipeline'
      ? pipelineDraftFrom(template.spec as Partial<SubmitPipelineBody>)
      : emptyPipelineDraft(),
  );
  const [overrides, setOverrides] = useState<OverridableField[]>(template?.allow_overrides ?? []);
  const [questions, setQuestions] = useState<QuestionDraft[]>(() => (template?.survey ?? []).map(questionDraftFrom));
  const [localErrors, setLocalErrors] = useState<LocalErrors>({});

  const save = useApiMutation<Record<string, unknown>, Template>(
    template ? 'PUT' : 'POST',
    template ? `/v1/templates/${template.id}` : '/v1/templates',
    { invalidate: ['/v1/templates'], onSuccess: (t) => navigate(`/templates/${t.id}`) },
  );

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    const built = kind === 'run' ? runSpecFrom(run) : pipelineSpecFrom(pipeline);
    setLocalErrors(built.errors);
    if (Object.keys(built.errors).length) return;
    const survey = questions.map(questionFrom);
    const body = { name, kind, spec: built.spec, allow_overrides: overrides };
    // An update clears what is emptied (null); a new template just leaves it out.
    if (template)
      save.mutate({ ...body, description: description.trim() || null, survey: survey.length ? survey : null });
    else
      save.mutate({
        ...body,
        description: description.trim() || undefined,
        survey: survey.length ? survey : undefined,
      });
  }

  const error = save.error;
  return (
    <>
      <PageHeader
        title={template ? `Edit ${template.name}` : 'New template'}
        subtitle="A run or a pipeline saved for launching, with an optional survey."
      />
      <form onSubmit={onSubmit} noValidate>
        <FormError error={error} fields={['name', 'description', 'kind', 'spec', 'allow_overrides', 'survey']} />
        <div className="spec-row">
          <Field label="Name" name="name" error={error}>
            {(p) => <input {...p} value={name} required onChange={(e) => setName(e.target.value)} />}
          </Field>
          <Field label="Description" name="description" error={error}>
            {(p) => <input {...p} value={description} onChange={(e) => setDescription(e.target.value)} />}
          </Field>
        </div>
        <FieldGroup legend="Launches" name="kind" error={error}>
          <div className="check-list">
            <label>
              <input type="radio" name="kind" checked={kind === 'run'} onChange={() => setKind('run')} /> A run (a split
              with 2 or more shards)
            </label>
            <label>
              <input type="radio" name="kind" checked={kind === 'pipeline'} onChange={() => setKind('pipeline')} /> A
              pipeline (ordered steps)
            </label>
          </div>
        </FieldGroup>
        <section className="card form-section" aria-label="Run spec">
          {kind === 'run' ? (
            <RunSpecFields
              draft={run}
              onChange={(patch) => setRun({ ...run, ...patch })}
              prefix="spec."
              error={error}
              localErrors={localErrors}
            />
          ) : (
            <PipelineFields
              draft={pipeline}
              onChange={setPipeline}
              prefix="spec."
              error={error}
              localErrors={localErrors}
            />
          )}
        </section>
        <FieldGroup
          legend="A launcher may override"
          name="allow_overrides"
          error={error}
          hint="Anything not ticked is fixed by the template."
        >
          <div className="check-list">
            {(Object.keys(OVERRIDE_WORDS) as OverridableField[]).map((field) => (
              <label key={field}>
                <input
                  type="checkbox"
                  checked={overrides.includes(field)}
                  onChange={(e) =>
                    setOverrides(e.target.checked ? [...overrides, field] : overrides.filter((o) => o !== field))
                  }
                />{' '}
                {OVERRIDE_WORDS[field]}
              </label>
            ))}
          </div>
        </FieldGroup>
        <h2>Survey</h2>
        <SurveyEditor questions={questions} onChange={setQuestions} error={error} />
        <SubmitRow>
          <button type="submit" className="btn btn-primary" disabled={save.isPending}>
            {save.isPending ? 'Saving…' : template ? 'Save template' : 'Create template'}
          </button>
          <Link href={template ? `/templates/${template.id}` : '/templates'} className="btn">
            Cancel
          </Link>
        </SubmitRow>
      </form>
    </>
  );
}
