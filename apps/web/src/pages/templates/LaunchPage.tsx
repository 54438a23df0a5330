// Launching a template: its survey as a form, the overrides it allows, and the run page once it has started. Every
// answer is checked by the API; its messages show next to their question (`survey_answers.<variable>`).
import type { Run, Template } from '@baton/contracts';
import { type FormEvent, useState } from 'react';
import { Link, useLocation, useParams } from 'wouter';
import { useApi, useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { FormError, SubmitRow } from '../../ui/forms';
import { PageHeader } from '../../ui/layout';
import { NotAllowed } from '../../ui/NotAllowed';
import { NotLoaded } from '../../ui/ObjectPage';
import { emptyOverrides, OverrideFields, type OverrideDraft, overridesFrom } from './survey/OverrideFields';
import { SurveyInputs } from './survey/SurveyInputs';
import { type AnswerDraft, answersFrom, initialAnswers } from './survey/surveyDraft';
import './spec/launch.css';

export default function LaunchPage() {
  const { id } = useParams<{ id: string }>();
  const canLaunch = useHasRole('operator');
  const q = useApi<Template>(`/v1/templates/${id}`);
  if (!q.data) return <NotLoaded error={q.error} what="Loading the template" />;
  if (!canLaunch)
    return (
      <NotAllowed title={`Launch ${q.data.name}`}>
        Launching needs the operator or admin role. <Link href={`/templates/${id}`}>Back to the template</Link>
      </NotAllowed>
    );
  return <LaunchForm template={q.data} />;
}

function LaunchForm({ template }: { template: Template }) {
  const [, navigate] = useLocation();
  const survey = template.survey ?? [];
  const [answers, setAnswers] = useState<Record<string, AnswerDraft>>(() => initialAnswers(survey));
  const [overrides, setOverrides] = useState<OverrideDraft>(emptyOverrides);
  const [varsError, setVarsError] = useState<string>();
  const launch = useApiMutation<Record<string, unknown>, Run>('POST', `/v1/templates/${template.id}/launch`, {
    invalidate: ['/v1/runs'],
    onSuccess: (run) => navigate(`/runs/${run.id}`),
  });

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    const o = overridesFrom(overrides);
    setVarsError(o.varsError);
    if (o.varsError) return;
    const survey_answers = answersFrom(survey, answers);
    launch.mutate({
      ...(Object.keys(survey_answers).length ? { survey_answers } : {}),
      ...(Object.keys(o.overrides).length ? { overrides: o.overrides } : {}),
    });
  }

  return (
    <>
      <PageHeader
        title={`Launch ${template.name}`}
        subtitle={
          <>
            A {template.kind} template. <Link href={`/templates/${template.id}`}>See what it runs</Link>
          </>
        }
      />
      <form onSubmit={onSubmit} noValidate aria-label={`Launch ${template.name}`}>
        <FormError error={launch.error} fields={['survey_answers', 'overrides']} />
        {survey.length ? (
          <section className="card form-section" aria-labelledby="survey-heading">
            <h2 id="survey-heading">Survey</h2>
            <SurveyInputs
              questions={survey}
              values={answers}
              onChange={(variable, value) => setAnswers((a) => ({ ...a, [variable]: value }))}
              prefix="survey_answers."
              error={launch.error}
            />
          </section>
        ) : (
          <p className="muted">This template asks nothing: launch it as it is.</p>
        )}
        {template.allow_overrides.length ? (
          <section className="card form-section" aria-labelledby="overrides-heading">
            <h2 id="overrides-heading">Overrides</h2>
            <OverrideFields
              allowed={template.allow_overrides}
              draft={overrides}
              onChange={(patch) => setOverrides((o) => ({ ...o, ...patch }))}
              prefix="overrides."
              error={launch.error}
              varsError={varsError}
            />
          </section>
        ) : null}
        <SubmitRow>
          <button type="submit" className="btn btn-primary" disabled={launch.isPending}>
            {launch.isPending ? 'Launching…' : 'Launch'}
          </button>
          <Link href={`/templates/${template.id}`} className="btn">
            Cancel
          </Link>
        </SubmitRow>
      </form>
    </>
  );
}
