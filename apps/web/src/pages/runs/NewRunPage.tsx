// Submitting a run: an inline playbook or a project's, against a stored or inline inventory, with everything
// POST /v1/runs accepts. Extra vars are checked in the browser; the server's problems show next to their fields.
import type { Run, SubmitRunBody } from '@baton/contracts';
import { type FormEvent, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { PageHeader } from '../../ui/layout';
import { NotAllowed } from '../../ui/NotAllowed';
import { optionalNumber, parseVars, parseWords } from '../templates/spec/vars';
import { CredentialChoice } from './CredentialChoice';
import { useInventories, useProjects } from './lookups';
import './runs.css';

/** The inventory select's entry for typing inventory content instead of picking a stored one. */
const INLINE_INVENTORY = '(inline)';
const FIELDS = [
  'playbook',
  'project_id',
  'ref',
  'inventory_id',
  'inventory',
  'credential_ids',
  'extra_vars',
  'limit',
  'forks',
  'verbosity',
  'timeout_s',
  'shards',
  'labels',
];
const PLAYBOOK_EXAMPLE = `- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.ping:`;

export default function NewRunPage() {
  const canSubmit = useHasRole('operator');
  if (!canSubmit)
    return (
      <NotAllowed title="New run">
        Submitting runs needs the operator or admin role. <Link href="/runs">Back to runs</Link>
      </NotAllowed>
    );
  return <NewRunForm />;
}

function NewRunForm() {
  const [, navigate] = useLocation();
  const projects = useProjects();
  const inventories = useInventories();

  const [source, setSource] = useState<'inline' | 'project'>('inline');
  const [playbook, setPlaybook] = useState('');
  const [projectId, setProjectId] = useState('');
  const [path, setPath] = useState('');
  const [ref, setRef] = useState('');
  const [inventory, setInventory] = useState('');
  const [inventoryText, setInventoryText] = useState('');
  const [credentialIds, setCredentialIds] = useState<string[]>([]);
  const [varsText, setVarsText] = useState('');
  const [varsChecked, setVarsChecked] = useState(false);
  const [limit, setLimit] = useState('');
  const [check, setCheck] = useState(false);
  const [shards, setShards] = useState('');
  const [labels, setLabels] = useState('');
  const [forks, setForks] = useState('');
  const [verbosity, setVerbosity] = useState('');
  const [timeout, setTimeoutS] = useState('');

  const submit = useApiMutation<SubmitRunBody, Run>('POST', '/v1/runs', {
    invalidate: ['/v1/runs'],
    onSuccess: (run) => navigate(`/runs/${run.id}`),
  });
  const error = submit.error;
  const parsedVars = parseVars(varsText);
  const varsErrors = varsChecked && !parsedVars.ok ? [parsedVars.error] : [];
  const project = projects.full.find((p) => p.id === projectId);

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    setVarsChecked(true);
    if (!parsedVars.ok) return;
    const body: SubmitRunBody = { playbook: source === 'inline' ? playbook : path.trim() };
    if (source === 'project') {
      if (projectId) body.project_id = projectId;
      if (ref.trim()) body.ref = ref.trim();
    }
    if (inventory === INLINE_INVENTORY) body.inventory = inventoryText;
    else if (inventory) body.inventory_id = inventory;
    if (credentialIds.length) body.credential_ids = credentialIds;
    if (parsedVars.vars) body.extra_vars = parsedVars.vars;
    if (limit.trim()) body.limit = limit.trim();
    if (check) body.check = true;
    const numbers = { shards, forks, verbosity, timeout_s: timeout };
    for (const [k, v] of Object.entries(numbers)) {
      const n = optionalNumber(v);
      if (n !== undefined) (body as Record<string, unknown>)[k] = n;
    }
    const labelList = parseWords(labels);
    if (labelList.length) body.labels = labelList;
    submit.mutate(body);
  }

  return (
    <>
      <PageHeader title="New run" subtitle="Run a playbook now against an inventory." />
      <form className="run-form" onSubmit={onSubmit} noValidate aria-label="New run">
        <FormError error={error} fields={FIELDS} />
        <fieldset>
          <legend>Playbook</legend>
          <div className="checks" role="radiogroup" aria-label="Playbook source">
            <label className="check-label">
              <input type="radio" name="source" checked={source === 'inline'} onChange={() => setSource('inline')} />
              Inline playbook (YAML typed here)
            </label>
            <label className="check-label">
              <input type="radio" name="source" checked={source === 'project'} onChange={() => setSource('project')} />A
              playbook in a project (git)
            </label>
          </div>
          {source === 'inline' ? (
            <Field label="Playbook YAML" name="playbook" error={error}>
              {(p) => (
                <textarea
                  {...p}
                  rows={10}
                  spellCheck={false}
                  value={playbook}
                  placeholder={PLAYBOOK_EXAMPLE}
                  onChange={(e) => setPlaybook(e.target.value)}
                />
              )}
            </Field>
          ) : (
            <>
              <Field
                label="Project"
                name="project_id"
                error={error}
                hint={
                  project
                    ? `Branch ${project.branch}${project.last_commit ? `, last synced commit ${project.last_commit.slice(0, 8)}` : ''}`
                    : undefined
                }
              >
                {(p) => (
                  <select {...p} value={projectId} onChange={(e) => setProjectId(e.target.value)}>
                    <option value="">Choose a project</option>
                    {projects.items.map((i) => (
                      <option key={i.id} value={i.id}>
                        {i.name}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              <div className="field-row">
                <Field label="Playbook path" name="playbook" error={error} hint="Relative to the project root.">
                  {(p) => (
                    <input
                      {...p}
                      value={path}
                      placeholder="site.yml"
                      spellCheck={false}
                      onChange={(e) => setPath(e.target.value)}
                    />
                  )}
                </Field>
                <Field
                  label="Ref"
                  name="ref"
                  error={error}
                  hint="A branch, tag or full commit id; empty runs the project's branch head."
                >
                  {(p) => <input {...p} value={ref} spellCheck={false} onChange={(e) => setRef(e.target.value)} />}
                </Field>
              </div>
            </>
          )}
        </fieldset>

        <fieldset>
          <legend>Where</legend>
          <Field label="Inventory" name="inventory_id" error={error}>
            {(p) => (
              <select {...p} value={inventory} onChange={(e) => setInventory(e.target.value)}>
                <option value="">Choose an inventory</option>
                {inventories.items.map((i) => (
                  <option key={i.id} value={i.id}>
                    {i.name}
                  </option>
                ))}
                <option value={INLINE_INVENTORY}>Inline inventory (typed here)…</option>
              </select>
            )}
          </Field>
          {inventory === INLINE_INVENTORY ? (
            <Field label="Inventory content" name="inventory" error={error} hint="INI, YAML or JSON.">
              {(p) => (
                <textarea
                  {...p}
                  rows={5}
                  spellCheck={false}
                  value={inventoryText}
                  onChange={(e) => setInventoryText(e.target.value)}
                />
              )}
            </Field>
          ) : null}
          <Field label="Limit" name="limit" error={error} hint="An ansible host pattern (--limit), e.g. web:!web3.">
            {(p) => <input {...p} value={limit} spellCheck={false} onChange={(e) => setLimit(e.target.value)} />}
          </Field>
          <CredentialChoice selected={credentialIds} onChange={setCredentialIds} error={error} />
        </fieldset>

        <fieldset>
          <legend>Variables and options</legend>
          <Field
            label="Extra vars"
            name="extra_vars"
            error={error}
            localErrors={varsErrors}
            hint="YAML or JSON: a mapping of variable names to values."
          >
            {(p) => (
              <textarea
                {...p}
                rows={5}
                spellCheck={false}
                value={varsText}
                placeholder={'region: eu-west\nreplicas: 3'}
                onChange={(e) => setVarsText(e.target.value)}
                onBlur={() => setVarsChecked(true)}
              />
            )}
          </Field>
          <label className="check-label">
            <input type="checkbox" checked={check} onChange={(e) => setCheck(e.target.checked)} />
            Check mode (dry run: --check --diff)
          </label>
          <div className="field-row">
            <NumberField label="Shards" name="shards" value={shards} set={setShards} error={error} min={0}>
              2 or more splits the run across that many parts of the hosts.
            </NumberField>
            <NumberField label="Forks" name="forks" value={forks} set={setForks} error={error} min={1} />
            <Field label="Verbosity" name="verbosity" error={error}>
              {(p) => (
                <select {...p} value={verbosity} onChange={(e) => setVerbosity(e.target.value)}>
                  <option value="">Default</option>
                  {[0, 1, 2, 3, 4].map((v) => (
                    <option key={v} value={v}>
                      {v === 0 ? '0 (normal)' : `${v} (-${'v'.repeat(v)})`}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <NumberField
              label="Timeout (seconds)"
              name="timeout_s"
              value={timeout}
              set={setTimeoutS}
              error={error}
              min={1}
            />
          </div>
          <Field
            label="Worker labels"
            name="labels"
            error={error}
            hint="Only a worker holding every label runs it; separate with commas or spaces."
          >
            {(p) => <input {...p} value={labels} spellCheck={false} onChange={(e) => setLabels(e.target.value)} />}
          </Field>
        </fieldset>

        <SubmitRow>
          <button type="submit" className="btn btn-primary" disabled={submit.isPending}>
            {submit.isPending ? 'Submitting…' : 'Submit run'}
          </button>
          <Link href="/runs" className="btn">
            Cancel
          </Link>
        </SubmitRow>
      </form>
    </>
  );
}

function NumberField({
  label,
  name,
  value,
  set,
  error,
  min,
  children,
}: {
  label: string;
  name: string;
  value: string;
  set(v: string): void;
  error: unknown;
  min: number;
  children?: string;
}) {
  return (
    <Field label={label} name={name} error={error} hint={children}>
      {(p) => (
        <input {...p} type="number" inputMode="numeric" min={min} value={value} onChange={(e) => set(e.target.value)} />
      )}
    </Field>
  );
}
