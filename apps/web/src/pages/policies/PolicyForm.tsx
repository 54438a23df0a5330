// The policy editor: what runs it holds (match), who may approve them, how many approvals, and when they expire.
import { type FormEvent, useState } from 'react';
import { asApiError, Field, FormError, SubmitRow } from '../../ui/forms';
import { CheckboxGroup, PickerField } from './pickers';
import { EXPIRY_UNITS, type ExpiryUnit, ORIGINS, type PolicyDraft, ROLES } from './policy-draft';

/** The objects a policy can match by id: label, and both the API's collection and the draft's key. */
const MATCHED_OBJECTS = [
  ['Projects', 'projects'],
  ['Templates', 'templates'],
  ['Inventories', 'inventories'],
] as const;

const FIELDS = ['name', 'description', 'enabled', 'match', 'approvers', 'min_approvals', 'expires_after_s'];

export function PolicyForm({
  initial,
  submitLabel,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  initial: PolicyDraft;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit(draft: PolicyDraft): void;
  onCancel(): void;
}) {
  const [d, setD] = useState<PolicyDraft>(initial);
  const set =
    <K extends keyof PolicyDraft>(key: K) =>
    (value: PolicyDraft[K]) =>
      setD((prev) => ({ ...prev, [key]: value }));
  const errorsAt = (path: string) => asApiError(error)?.fieldErrors(path) ?? [];
  function submit(e: FormEvent) {
    e.preventDefault();
    onSubmit(d);
  }
  return (
    <form className="policy-form" onSubmit={submit} noValidate aria-label="Policy">
      <Field label="Name" name="name" error={error}>
        {(p) => <input {...p} value={d.name} onChange={(e) => set('name')(e.target.value)} />}
      </Field>
      <Field label="Description (optional)" name="description" error={error}>
        {(p) => (
          <textarea
            {...p}
            className="short"
            value={d.description}
            onChange={(e) => set('description')(e.target.value)}
          />
        )}
      </Field>
      <div className="field">
        <label>
          <input type="checkbox" checked={d.enabled} onChange={(e) => set('enabled')(e.target.checked)} /> Enabled
          (holds matching runs from now on)
        </label>
      </div>

      <fieldset>
        <legend>Which runs it holds</legend>
        <p className="hint">
          Every field given must hold; within a field, any item will do. Leave everything empty to hold every run.
        </p>
        <div className="policy-grid">
          {MATCHED_OBJECTS.map(([label, collection], i) => (
            <PickerField
              key={collection}
              label={label}
              name={`match.${collection}`}
              error={error}
              hint={i === 0 ? 'Ctrl/⌘-click to choose several' : undefined}
              collection={collection}
              value={d[collection]}
              onChange={set(collection)}
            />
          ))}
          <Field
            label="Playbooks (globs)"
            name="match.playbooks"
            error={error}
            hint={
              <>
                One a line: <code>*</code> any characters but <code>/</code>, <code>**</code> any, <code>?</code> one.
                An inline playbook is <code>(inline)</code>.
              </>
            }
          >
            {(p) => (
              <textarea
                {...p}
                className="short"
                value={d.playbooks}
                onChange={(e) => set('playbooks')(e.target.value)}
              />
            )}
          </Field>
          <Field
            label="Hosts (globs)"
            name="match.hosts"
            error={error}
            hint="One a line; holds when any targeted host matches, e.g. db-*"
          >
            {(p) => (
              <textarea {...p} className="short" value={d.hosts} onChange={(e) => set('hosts')(e.target.value)} />
            )}
          </Field>
          <Field label="Worker labels" name="match.labels" error={error} hint="Separated by spaces or commas">
            {(p) => <input {...p} value={d.labels} onChange={(e) => set('labels')(e.target.value)} />}
          </Field>
          <Field label="Check mode" name="match.check" error={error}>
            {(p) => (
              <select {...p} value={d.check} onChange={(e) => set('check')(e.target.value as PolicyDraft['check'])}>
                <option value="any">Real and dry runs</option>
                <option value="false">Real runs only</option>
                <option value="true">Dry runs (check mode) only</option>
              </select>
            )}
          </Field>
          <CheckboxGroup
            legend="Origins"
            options={ORIGINS}
            value={d.origins}
            onChange={set('origins')}
            errors={errorsAt('match.origins')}
          />
          <CheckboxGroup
            legend="Submitted by roles"
            options={ROLES}
            value={d.submittedByRoles}
            onChange={set('submittedByRoles')}
            errors={errorsAt('match.submitted_by_roles')}
          />
        </div>
      </fieldset>

      <fieldset>
        <legend>Who may approve</legend>
        <p className="hint">Admins may always decide. The submitter of a run never approves their own.</p>
        <div className="policy-grid">
          <CheckboxGroup
            legend="Roles"
            options={ROLES}
            value={d.approverRoles}
            onChange={set('approverRoles')}
            errors={errorsAt('approvers.roles')}
          />
          <PickerField
            label="Users"
            name="approvers.users"
            error={error}
            collection="users"
            value={d.approverUsers}
            onChange={set('approverUsers')}
          />
          <PickerField
            label="Teams"
            name="approvers.teams"
            error={error}
            hint="Any member may approve"
            collection="teams"
            value={d.approverTeams}
            onChange={set('approverTeams')}
          />
        </div>
        <Field label="Approvals needed" name="min_approvals" error={error} hint="1 to 10 different approvers">
          {(p) => (
            <input
              {...p}
              type="number"
              inputMode="numeric"
              min={1}
              max={10}
              value={d.minApprovals}
              onChange={(e) => set('minApprovals')(e.target.value)}
            />
          )}
        </Field>
        <div className="expiry-row">
          <Field
            label="Expires after"
            name="expires_after_s"
            error={error}
            hint="Empty: held runs wait until decided. At least 1 minute, at most 30 days; then the run is rejected (expired)."
          >
            {(p) => (
              <input
                {...p}
                type="number"
                inputMode="numeric"
                min={1}
                value={d.expiry}
                onChange={(e) => set('expiry')(e.target.value)}
              />
            )}
          </Field>
          <Field label="Unit" name="expiry_unit">
            {(p) => (
              <select {...p} value={d.expiryUnit} onChange={(e) => set('expiryUnit')(e.target.value as ExpiryUnit)}>
                {Object.keys(EXPIRY_UNITS).map((u) => (
                  <option key={u} value={u}>
                    {u}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
      </fieldset>

      <FormError
        error={error}
        fields={[
          ...FIELDS.filter((f) => f !== 'match' && f !== 'approvers'),
          'match.projects',
          'match.templates',
          'match.inventories',
          'match.playbooks',
          'match.hosts',
          'match.labels',
          'match.check',
          'match.origins',
          'match.submitted_by_roles',
          'approvers.roles',
          'approvers.users',
          'approvers.teams',
        ]}
      />
      <SubmitRow>
        <button type="submit" className="btn btn-primary" disabled={pending}>
          {submitLabel}
        </button>
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
      </SubmitRow>
    </form>
  );
}
