// /import (admins): bring in an AWX `awx export` or a Semaphore project backup. The file is read and checked as
// JSON here first; a preview (dry run) shows what the import would do, and only that same file, format and
// conflict rule can then be imported for real, so what is written is what was previewed.
import type { ImportFormat, ImportReport, OnConflict } from '@baton/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type ChangeEvent, type FormEvent, useId, useState } from 'react';
import { Link } from 'wouter';
import { type ApiError, qs, request } from '../../api/client';
import { invalidatePaths } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { Field, SubmitRow } from '../../ui/forms';
import { PageHeader } from '../../ui/layout';
import { NotAllowed } from '../../ui/NotAllowed';
import { humanSize, readDocument } from './import-document';
import { ImportProblem } from './ImportProblem';
import { ImportReportView, summaryLine } from './ImportReportView';
import './import.css';

const CONFLICT_CHOICES: Array<{ value: OnConflict; label: string; explain: string }> = [
  {
    value: 'skip',
    label: 'Skip',
    explain: 'An object whose name already exists is kept as it is; imported objects refer to it.',
  },
  {
    value: 'rename',
    label: 'Rename',
    explain: 'The imported object is created beside the existing one, named "<name> (imported)".',
  },
  {
    value: 'update',
    label: 'Update',
    explain: 'The existing object takes the imported fields; the secrets already stored in Baton are kept.',
  },
];

/** The chosen file, read and parsed; `key` tells this choice from any other (a preview answers one key). */
interface ChosenFile {
  key: string;
  name: string;
  size: number;
  document: Record<string, unknown>;
}

let picks = 0;

interface ImportCall {
  format: ImportFormat;
  onConflict: OnConflict;
  dryRun: boolean;
  file: ChosenFile;
}

interface Answer {
  report: ImportReport;
  /** the file, format and conflict rule it answered */
  key: string;
}

export default function ImportPage() {
  const isAdmin = useHasRole('admin');
  if (!isAdmin)
    return (
      <NotAllowed title="Import">
        Only admins import AWX exports and Semaphore backups. <Link href="/runs">Back to runs</Link>
      </NotAllowed>
    );
  return <ImportView />;
}

/** The choices are frozen while a call is out, so its answer is always about what the form shows. */
function ImportView() {
  const client = useQueryClient();
  const conflictHint = useId();
  const importHint = useId();
  const [format, setFormat] = useState<ImportFormat>('awx');
  const [onConflict, setOnConflict] = useState<OnConflict>('skip');
  const [file, setFile] = useState<ChosenFile | null>(null);
  const [reading, setReading] = useState(false);
  const [fileError, setFileError] = useState<string | null>(null);
  const [answer, setAnswer] = useState<Answer | null>(null);
  const call = useMutation<ImportReport, ApiError, ImportCall>({
    mutationFn: async ({ format: f, onConflict: c, dryRun, file: chosen }) => {
      const path = `/v1/import/${f}${qs({ dry_run: dryRun, on_conflict: c })}`;
      return (await request<ImportReport>('POST', path, { body: chosen.document })).body;
    },
    // The report on screen answered an earlier call: it goes, so a refusal is never read beside an older success.
    onMutate: () => setAnswer(null),
    onSuccess: async (report, v) => {
      setAnswer({ report, key: keyOf(v.file, v.format, v.onConflict) });
      // A real import creates objects of every kind: every cached list is stale.
      if (!v.dryRun) await invalidatePaths(client, ['/v1/']);
    },
  });

  const currentKey = file ? keyOf(file, format, onConflict) : null;
  const previewed = answer !== null && answer.report.dry_run && answer.key === currentKey;
  const staleAnswer = answer !== null && answer.report.dry_run && answer.key !== currentKey && file !== null;

  async function choose(e: ChangeEvent<HTMLInputElement>) {
    const picked = e.target.files?.[0];
    setFile(null);
    setFileError(null);
    setAnswer(null);
    call.reset();
    if (!picked) return;
    setReading(true);
    const read = await readDocument(picked);
    setReading(false);
    if (!read.ok) {
      setFileError(`${read.message} Nothing was sent.`);
      return;
    }
    setFile({
      // Each pick is a new choice, even of the same file name: its content may have changed since the preview.
      key: `${picked.name}|${++picks}`,
      name: picked.name,
      size: picked.size,
      document: read.document,
    });
  }

  function run(dryRun: boolean) {
    if (!file) return;
    call.mutate({ format, onConflict, dryRun, file });
  }
  function preview(e: FormEvent) {
    e.preventDefault();
    run(true);
  }

  return (
    <>
      <PageHeader
        title="Import"
        subtitle="Bring projects, inventories, credentials, templates and schedules over from AWX or Semaphore. Preview first: nothing is written until you import."
      />
      <form className="card import-form" onSubmit={preview} noValidate aria-label="Import a document">
        <Field
          label="Format"
          name="format"
          hint={
            format === 'awx'
              ? 'The JSON written by awx export (users, organizations, credentials, projects, inventory, templates…).'
              : 'The JSON of a Semaphore project backup (Project → Backup).'
          }
        >
          {(p) => (
            <select
              {...p}
              value={format}
              disabled={call.isPending}
              onChange={(e) => setFormat(e.target.value as ImportFormat)}
            >
              <option value="awx">AWX (awx export JSON)</option>
              <option value="semaphore">Semaphore project backup</option>
            </select>
          )}
        </Field>
        <Field
          label="File"
          name="file"
          localErrors={fileError ? [fileError] : []}
          hint={
            file
              ? `${file.name}, ${humanSize(file.size)}: read as JSON, ready to preview.`
              : 'A .json file of at most 20 MiB. It is checked here before anything is sent.'
          }
        >
          {(p) => (
            <input
              {...p}
              type="file"
              accept=".json,application/json"
              disabled={call.isPending}
              onChange={(e) => void choose(e)}
            />
          )}
        </Field>
        <fieldset className="import-conflict" aria-describedby={conflictHint} disabled={call.isPending}>
          <legend>When an object with the same name exists</legend>
          <p className="hint" id={conflictHint}>
            Names are compared per kind (a project with a project, a credential with a credential).
          </p>
          {CONFLICT_CHOICES.map((c) => (
            <div key={c.value} className="import-choice">
              <label>
                <input
                  type="radio"
                  name="on_conflict"
                  value={c.value}
                  checked={onConflict === c.value}
                  onChange={() => setOnConflict(c.value)}
                  aria-describedby={`${conflictHint}-${c.value}`}
                />{' '}
                {c.label}
              </label>
              <span className="hint" id={`${conflictHint}-${c.value}`}>
                {c.explain}
              </span>
            </div>
          ))}
        </fieldset>
        {reading ? <p className="muted">Reading the file…</p> : null}
        <SubmitRow>
          <button type="submit" className="btn" disabled={!file || call.isPending}>
            Preview (dry run)
          </button>
          <button
            type="button"
            className="btn btn-primary"
            disabled={!previewed || call.isPending}
            onClick={() => run(false)}
            aria-describedby={importHint}
          >
            Import
          </button>
        </SubmitRow>
        <p className="hint" id={importHint}>
          {previewed
            ? 'Imports what the preview shows, in one transaction: everything or nothing.'
            : staleAnswer
              ? 'The file, format or conflict rule changed since the preview: preview again before importing.'
              : 'Import is possible after a preview of this file, format and conflict rule.'}
        </p>
      </form>
      <div className="import-result" role="status" aria-live="polite" data-testid="import-status">
        {call.isPending
          ? call.variables?.dryRun
            ? 'Previewing…'
            : 'Importing…'
          : answer && !call.error
            ? summaryLine(answer.report)
            : ''}
      </div>
      {call.error ? <ImportProblem error={call.error} /> : null}
      {answer ? <ImportReportView report={answer.report} /> : null}
    </>
  );
}

function keyOf(file: ChosenFile, format: ImportFormat, onConflict: OnConflict): string {
  return `${file.key}|${format}|${onConflict}`;
}
