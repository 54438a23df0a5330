// What a run spec, a pipeline spec or a launch target starts, read-only, with names for the objects it names.
import type { LaunchTarget, SubmitPipelineBody, SubmitRunBody } from '@baton/contracts';
import { Link } from 'wouter';
import { Details } from '../../../ui/layout';
import { useCredentialNames, useInventoryNames, useProjectNames, useTemplateList } from './lookups';
import { varsText } from './vars';

type RunSpec = Partial<SubmitRunBody> & { name?: string; run_if?: string };

export function RunSpecSummary({ spec }: { spec: RunSpec }) {
  const projects = useProjectNames();
  const inventories = useInventoryNames();
  const credentials = useCredentialNames();
  const vars = varsText(spec.extra_vars);
  return (
    <>
      <Details
        items={[
          ...(spec.name !== undefined ? ([['Step name', spec.name]] as Array<[string, string]>) : []),
          ...(spec.run_if ? ([['Runs when', spec.run_if]] as Array<[string, string]>) : []),
          [
            'Playbook',
            spec.project_id ? (
              <>
                <code>{spec.playbook}</code> in{' '}
                <Link href={`/projects/${spec.project_id}`}>{projects.nameOf(spec.project_id)}</Link>
                {spec.ref ? (
                  <>
                    {' '}
                    at <code>{spec.ref}</code>
                  </>
                ) : null}
              </>
            ) : (
              'inline (below)'
            ),
          ],
          [
            'Inventory',
            spec.inventory_id ? (
              <Link href={`/inventories/${spec.inventory_id}`}>{inventories.nameOf(spec.inventory_id)}</Link>
            ) : spec.inventory ? (
              'inline (below)'
            ) : null,
          ],
          ['Credentials', spec.credential_ids?.length ? spec.credential_ids.map(credentials.nameOf).join(', ') : null],
          ['Limit', spec.limit ? <code>{spec.limit}</code> : null],
          ['Check mode', spec.check ? 'yes' : 'no'],
          ['Shards', spec.shards !== undefined && spec.shards >= 2 ? String(spec.shards) : null],
          ['Worker labels', spec.labels?.length ? spec.labels.join(', ') : null],
        ]}
      />
      {!spec.project_id && spec.playbook ? <Block title="Playbook" text={spec.playbook} /> : null}
      {spec.inventory ? <Block title="Inventory" text={spec.inventory} /> : null}
      {vars ? <Block title="Extra vars" text={vars} /> : null}
    </>
  );
}

function Block({ title, text }: { title: string; text: string }) {
  return (
    <details className="form-section">
      <summary>{title}</summary>
      <pre className="playbook">{text}</pre>
    </details>
  );
}

export function PipelineSpecSummary({ spec }: { spec: Partial<SubmitPipelineBody> }) {
  const shared: RunSpec = { ...spec, playbook: undefined };
  return (
    <>
      {spec.name ? <p>Pipeline name: {spec.name}</p> : null}
      <ol className="editor-list">
        {(spec.steps ?? []).map((s, i) => (
          <li key={i} className="card">
            <h3>
              Step {i + 1}
              {s.name ? `: ${s.name}` : ''}
            </h3>
            <RunSpecSummary spec={s} />
          </li>
        ))}
      </ol>
      {spec.inventory_id || spec.inventory || spec.extra_vars || spec.credential_ids ? (
        <>
          <h3>For every step</h3>
          <RunSpecSummary spec={{ ...shared, playbook: undefined, project_id: undefined }} />
        </>
      ) : null}
    </>
  );
}

/** What a schedule or trigger starts. */
export function TargetSummary({ target }: { target: LaunchTarget }) {
  const templates = useTemplateList(Boolean(target.template_id));
  if (target.template_id)
    return (
      <Details
        items={[
          [
            'Template',
            <Link key="t" href={`/templates/${target.template_id}`}>
              {templates.nameOf(target.template_id)}
            </Link>,
          ],
          [
            'Survey answers',
            target.survey_answers && Object.keys(target.survey_answers).length ? (
              <code>{JSON.stringify(target.survey_answers)}</code>
            ) : null,
          ],
          ['Overrides', target.overrides ? <code>{JSON.stringify(target.overrides)}</code> : null],
        ]}
      />
    );
  if (target.pipeline) return <PipelineSpecSummary spec={target.pipeline} />;
  if (target.run) return <RunSpecSummary spec={target.run} />;
  return null;
}

/** A target in a few words, for list rows. */
export function targetWords(target: LaunchTarget, templateName?: (id: string) => string): string {
  if (target.template_id) return `template ${templateName ? templateName(target.template_id) : target.template_id}`;
  if (target.pipeline)
    return `pipeline of ${target.pipeline.steps.length} step${target.pipeline.steps.length === 1 ? '' : 's'}`;
  if (target.run) {
    const what = target.run.shards !== undefined && target.run.shards >= 2 ? `split of ${target.run.shards}` : 'run';
    return target.run.project_id ? `${what}: ${target.run.playbook}` : `${what} of an inline playbook`;
  }
  return '—';
}
