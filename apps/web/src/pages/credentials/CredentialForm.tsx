// The credential form, one set of inputs per type. Secrets are write-only: on edit they start blank and a
// blank secret is left out of the PUT, which keeps the stored one (the API replaces only the inputs it is given).
import type { CredentialType } from '@baton/contracts';
import { useState } from 'react';
import { useLocation } from 'wouter';
import { useApiMutation } from '../../api/hooks';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import type { Credential } from '../projects/types';
import { CREDENTIAL_TYPE_SPECS, CREDENTIAL_TYPES, envNames, type InputSpec } from './credential-types';
import { EnvRows, type EnvRow } from './EnvRows';
import '../projects/inputs.css';

type Body = Record<string, unknown>;

export function CredentialForm({ credential }: { credential?: Credential }) {
  const [, navigate] = useLocation();
  const editing = credential !== undefined;
  const [type, setType] = useState<CredentialType>(credential?.type ?? 'ssh_key');
  const [name, setName] = useState(credential?.name ?? '');
  const [description, setDescription] = useState(credential?.description ?? '');
  // Public inputs start with their stored values; secrets always start blank.
  const [values, setValues] = useState<Record<string, string>>(() => ({ ...(credential?.inputs ?? {}) }));
  const [cleared, setCleared] = useState<Record<string, boolean>>({});
  const storedEnv = credential ? envNames(credential.secret_fields) : [];
  const [envRows, setEnvRows] = useState<EnvRow[]>(() =>
    storedEnv.length ? storedEnv.map((n) => ({ name: n, value: '' })) : [{ name: '', value: '' }],
  );
  const [envError, setEnvError] = useState<string | undefined>();
  const save = useApiMutation<Body, Credential>(
    editing ? 'PUT' : 'POST',
    editing ? `/v1/credentials/${credential.id}` : '/v1/credentials',
    { invalidate: ['/v1/credentials'], onSuccess: (c) => navigate(`/credentials/${c.id}`) },
  );
  const spec = CREDENTIAL_TYPE_SPECS[type];
  const isSet = (input: string) => credential?.secret_fields.includes(input) ?? false;

  function createBody(): Body {
    const inputs: Body = {};
    if (type === 'env')
      inputs.variables = Object.fromEntries(envRows.filter((r) => r.name).map((r) => [r.name, r.value]));
    for (const i of spec.inputs) if (values[i.name]) inputs[i.name] = values[i.name];
    return { name, type, ...(description.trim() ? { description } : {}), inputs };
  }

  /** Only what changed; undefined when the variables were changed without every value given. */
  function updateBody(stored: Credential): Body | undefined {
    const body: Body = {};
    const inputs: Body = {};
    if (name !== stored.name) body.name = name;
    if (description !== (stored.description ?? '')) body.description = description.trim() ? description : null;
    for (const i of spec.inputs) {
      const v = values[i.name] ?? '';
      if (i.secret) {
        if (v) inputs[i.name] = v;
        else if (cleared[i.name]) inputs[i.name] = null;
      } else if (v !== (stored.inputs[i.name] ?? '')) inputs[i.name] = v === '' && i.optional ? null : v;
    }
    if (type === 'env') {
      const rows = envRows.filter((r) => r.name || r.value);
      const sameNames =
        rows.length === storedEnv.length && rows.every((r) => storedEnv.includes(r.name) && r.value === '');
      if (!sameNames) {
        // The variables are one input: giving them replaces the whole set, so every value must be given again.
        const missing = rows.filter((r) => storedEnv.includes(r.name) && r.value === '').map((r) => r.name);
        if (missing.length) {
          setEnvError(
            `Type the value of ${missing.join(', ')} too: changing the variables replaces them all, and stored values are never shown.`,
          );
          return undefined;
        }
        inputs.variables = Object.fromEntries(rows.map((r) => [r.name, r.value]));
      }
    }
    if (Object.keys(inputs).length) body.inputs = inputs;
    return body;
  }

  function submit(e: React.FormEvent) {
    e.preventDefault();
    setEnvError(undefined);
    if (!credential) {
      save.mutate(createBody());
      return;
    }
    const body = updateBody(credential);
    if (!body) return;
    if (Object.keys(body).length === 0) navigate(`/credentials/${credential.id}`);
    else save.mutate(body);
  }

  const fieldNames = ['name', 'type', 'description', 'inputs.variables', ...spec.inputs.map((i) => `inputs.${i.name}`)];
  return (
    <form className="input-form" onSubmit={submit} noValidate autoComplete="off">
      <FormError error={save.error} fields={fieldNames} />
      <Field label="Name" name="name" error={save.error}>
        {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} required />}
      </Field>
      <Field
        label="Type"
        name="type"
        error={save.error}
        hint={editing ? 'A credential never changes type: create a new one instead.' : spec.purpose}
      >
        {(p) => (
          <select
            {...p}
            value={type}
            disabled={editing}
            onChange={(e) => {
              setType(e.target.value as CredentialType);
              save.reset();
            }}
          >
            {CREDENTIAL_TYPES.map((t) => (
              <option key={t} value={t}>
                {CREDENTIAL_TYPE_SPECS[t].label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Description" name="description" error={save.error}>
        {(p) => <input {...p} value={description} onChange={(e) => setDescription(e.target.value)} />}
      </Field>
      {spec.inputs.map((i) => (
        <InputField
          key={`${type}.${i.name}`}
          spec={i}
          value={values[i.name] ?? ''}
          onChange={(v) => setValues((old) => ({ ...old, [i.name]: v }))}
          stored={isSet(i.name)}
          cleared={cleared[i.name] ?? false}
          onClear={(c) => setCleared((old) => ({ ...old, [i.name]: c }))}
          error={save.error}
        />
      ))}
      {type === 'env' ? (
        <EnvRows
          rows={envRows}
          onChange={(rows) => {
            setEnvRows(rows);
            setEnvError(undefined);
          }}
          editing={editing}
          error={save.error}
          localError={envError}
        />
      ) : null}
      <SubmitRow>
        <button type="submit" className="btn btn-primary" disabled={save.isPending}>
          {editing ? 'Save credential' : 'Create credential'}
        </button>
        <button
          type="button"
          className="btn"
          onClick={() => navigate(credential ? `/credentials/${credential.id}` : '/credentials')}
        >
          Cancel
        </button>
      </SubmitRow>
    </form>
  );
}

interface InputFieldProps {
  spec: InputSpec;
  value: string;
  onChange(v: string): void;
  /** a secret is stored for this input (edit only) */
  stored: boolean;
  cleared: boolean;
  onClear(c: boolean): void;
  error: unknown;
}

function InputField({ spec, value, onChange, stored, cleared, onClear, error }: InputFieldProps) {
  const hint = [
    spec.hint,
    spec.secret && stored ? 'A value is stored and never shown: leave blank to keep it.' : undefined,
    spec.optional && !(spec.secret && stored) ? 'Optional.' : undefined,
  ]
    .filter(Boolean)
    .join(' ');
  return (
    <>
      <Field label={spec.label} name={`inputs.${spec.name}`} error={error} hint={hint || undefined}>
        {(p) =>
          spec.control === 'textarea' ? (
            <textarea
              {...p}
              className="secret-key"
              value={value}
              onChange={(e) => onChange(e.target.value)}
              placeholder={stored ? '(stored: leave blank to keep)' : undefined}
              spellCheck={false}
              autoComplete="off"
              disabled={cleared}
            />
          ) : (
            <input
              {...p}
              type={spec.control}
              value={value}
              onChange={(e) => onChange(e.target.value)}
              placeholder={spec.secret && stored ? '(stored: leave blank to keep)' : undefined}
              autoComplete={spec.secret ? 'new-password' : 'off'}
              spellCheck={false}
              disabled={cleared}
            />
          )
        }
      </Field>
      {spec.secret && spec.optional && stored ? (
        <label className="checkbox-row">
          <input type="checkbox" checked={cleared} onChange={(e) => onClear(e.target.checked)} /> Remove the stored{' '}
          {spec.label.toLowerCase()}
        </label>
      ) : null}
    </>
  );
}
