// Which pushes fire a trigger: the events, and globs over branch and tag names.
import type { TriggerEvent } from '@baton/contracts';
import { Field } from '../../ui/forms';
import { FieldGroup } from '../templates/spec/FieldGroup';
import type { FilterDraft } from './filters';

export function FilterFields({
  draft,
  onChange,
  error,
}: {
  draft: FilterDraft;
  onChange(d: FilterDraft): void;
  error: unknown;
}) {
  const toggle = (e: TriggerEvent, on: boolean) =>
    onChange({ ...draft, events: on ? [...draft.events, e] : draft.events.filter((x) => x !== e) });
  return (
    <>
      <FieldGroup legend="Fires on" name="filters.events" error={error}>
        <div className="check-list">
          <label>
            <input
              type="checkbox"
              checked={draft.events.includes('push')}
              onChange={(e) => toggle('push', e.target.checked)}
            />{' '}
            Branch pushes
          </label>
          <label>
            <input
              type="checkbox"
              checked={draft.events.includes('tag_push')}
              onChange={(e) => toggle('tag_push', e.target.checked)}
            />{' '}
            Tag pushes
          </label>
        </div>
      </FieldGroup>
      <div className="spec-row">
        <Field
          label="Branches"
          name="filters.branches"
          error={error}
          hint="Globs separated by commas, e.g. main, release/*. Empty: every branch."
        >
          {(p) => (
            <input
              {...p}
              className="mono"
              value={draft.branches}
              onChange={(e) => onChange({ ...draft, branches: e.target.value })}
            />
          )}
        </Field>
        <Field label="Tags" name="filters.tags" error={error} hint="Globs, e.g. v*. Empty: every tag.">
          {(p) => (
            <input
              {...p}
              className="mono"
              value={draft.tags}
              onChange={(e) => onChange({ ...draft, tags: e.target.value })}
            />
          )}
        </Field>
      </div>
    </>
  );
}
