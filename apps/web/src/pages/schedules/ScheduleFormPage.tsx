// Creating and editing a schedule: a cron expression (in words beside it), the time zone it is read in, enabled,
// and what it starts. The server checks the cron in its zone and the target as a submission; messages show at
// `cron`, `timezone` and `target.…`. The next five times show while typing (POST /v1/schedules/preview).
import type { Schedule } from '@baton/contracts';
import { type FormEvent, useMemo, useState } from 'react';
import { Link, useLocation, useParams } from 'wouter';
import { useApi, useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { PageHeader } from '../../ui/layout';
import { NotAllowed } from '../../ui/NotAllowed';
import { NotLoaded } from '../../ui/ObjectPage';
import type { LocalErrors } from '../templates/spec/runDraft';
import { describeCron, timeZones } from './cron';
import { NextTimesPreview } from './NextTimesPreview';
import {
  emptyTarget,
  TargetFields,
  type TargetDraft,
  targetDraftFrom,
  targetFrom,
  useTargetTemplate,
} from './TargetFields';
import '../templates/spec/launch.css';

export default function ScheduleFormPage() {
  const { id } = useParams<{ id?: string }>();
  const canCreate = useHasRole('operator');
  const existing = useApi<Schedule>(id ? `/v1/schedules/${id}` : null);
  if (!canCreate)
    return (
      <NotAllowed title={id ? 'Edit schedule' : 'New schedule'}>
        Schedules are created and changed by operators and admins. <Link href="/schedules">Back to schedules</Link>
      </NotAllowed>
    );
  if (id && !existing.data) return <NotLoaded error={existing.error} what="Loading the schedule" />;
  return <ScheduleForm key={id ?? 'new'} schedule={existing.data} />;
}

const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

function ScheduleForm({ schedule }: { schedule?: Schedule }) {
  const [, navigate] = useLocation();
  const zones = useMemo(timeZones, []);
  const [name, setName] = useState(schedule?.name ?? '');
  const [cron, setCron] = useState(schedule?.cron ?? '0 3 * * *');
  const [timezone, setTimezone] = useState(schedule?.timezone ?? browserZone());
  const [enabled, setEnabled] = useState(schedule?.enabled ?? true);
  // Editing keeps the stored target unless asked to change it (its sealed password answers cannot be shown).
  const [changeTarget, setChangeTarget] = useState(!schedule);
  const [target, setTarget] = useState<TargetDraft>(() =>
    schedule ? targetDraftFrom(schedule.target) : emptyTarget(),
  );
  const [localErrors, setLocalErrors] = useState<LocalErrors>({});
  const template = useTargetTemplate(target);
  const cronWords = describeCron(cron);

  const save = useApiMutation<Record<string, unknown>, Schedule>(
    schedule ? 'PUT' : 'POST',
    schedule ? `/v1/schedules/${schedule.id}` : '/v1/schedules',
    { invalidate: ['/v1/schedules'], onSuccess: (s) => navigate(`/schedules/${s.id}`) },
  );

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    const body: Record<string, unknown> = { name, cron, timezone, enabled };
    if (changeTarget) {
      const built = targetFrom(target, template.data);
      setLocalErrors(built.errors);
      if (Object.keys(built.errors).length) return;
      body.target = built.target;
    }
    save.mutate(body);
  }

  const error = save.error;
  return (
    <>
      <PageHeader
        title={schedule ? `Edit ${schedule.name}` : 'New schedule'}
        subtitle="Starts a run, a pipeline or a template at the times a cron expression names, in a time zone."
      />
      <form onSubmit={onSubmit} noValidate aria-label={schedule ? 'Edit schedule' : 'New schedule'}>
        <FormError error={error} fields={['name', 'cron', 'timezone', 'enabled', 'target']} />
        <Field label="Name" name="name" error={error}>
          {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <div className="spec-row">
          <Field
            label="Cron expression"
            name="cron"
            error={error}
            localErrors={cronWords.problem ? [cronWords.problem] : []}
            hint={
              cronWords.words ? (
                <span className="cron-words" data-testid="cron-words">
                  {cronWords.words}
                </span>
              ) : (
                'minute hour day-of-month month day-of-week (or seconds first): e.g. 30 2 * * 1-5'
              )
            }
          >
            {(p) => <input {...p} className="mono" value={cron} onChange={(e) => setCron(e.target.value)} />}
          </Field>
          <Field label="Time zone" name="timezone" error={error} hint="The cron expression is read in this zone.">
            {(p) => (
              <select {...p} value={timezone} onChange={(e) => setTimezone(e.target.value)}>
                {zones.includes(timezone) ? null : <option value={timezone}>{timezone}</option>}
                {zones.map((z) => (
                  <option key={z} value={z}>
                    {z}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <NextTimesPreview cron={cron} timezone={timezone} />
        <label className="check-row">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
        </label>
        {schedule ? (
          <label className="check-row">
            <input type="checkbox" checked={changeTarget} onChange={(e) => setChangeTarget(e.target.checked)} /> Change
            what it starts (password answers must be typed again)
          </label>
        ) : null}
        {changeTarget ? (
          <TargetFields
            draft={target}
            onChange={setTarget}
            error={error}
            localErrors={localErrors}
            what="The schedule"
          />
        ) : null}
        <SubmitRow>
          <button type="submit" className="btn btn-primary" disabled={save.isPending}>
            {save.isPending ? 'Saving…' : schedule ? 'Save schedule' : 'Create schedule'}
          </button>
          <Link href={schedule ? `/schedules/${schedule.id}` : '/schedules'} className="btn">
            Cancel
          </Link>
        </SubmitRow>
      </form>
    </>
  );
}
