// Every grant the caller may see (admins: all; others: what they or their teams hold and what they manage),
// filtered by subject or object; with an object filter, the "Who can use this" panel to grant on it.
import { type FormEvent, useState } from 'react';
import { useSearchParams } from 'wouter';
import { qs } from '../../api/client';
import { useApiMutation, usePagedList } from '../../api/hooks';
import { useMe } from '../../auth/auth';
import { AccessPanel, type GrantView, SubjectName, SubjectPicker, type SubjectKind } from '../../ui/AccessPanel';
import { ConfirmButton } from '../../ui/Confirm';
import { Field, FormError } from '../../ui/forms';
import { EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';
import { ObjectLink } from './objects';

const ID = /^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/;

export default function GrantsPage() {
  const me = useMe();
  const [params, setParams] = useSearchParams();
  const subject = params.get('subject') ?? '';
  const object = params.get('object') ?? '';
  const grants = usePagedList<GrantView>(`/v1/grants${qs({ subject, object, limit: 50 })}`);
  const revoke = useApiMutation<string, void>('DELETE', (id) => `/v1/grants/${id}`, { invalidate: ['/v1/grants'] });
  // A visible manage grant on an object means the caller manages it (see AccessPanel); admins manage everything.
  const managed = new Set(grants.items.filter((g) => g.level === 'manage').map((g) => g.object));
  const canRevoke = (g: GrantView) => me.role === 'admin' || (me.role !== 'viewer' && managed.has(g.object));

  return (
    <>
      <PageHeader
        title="Grants"
        subtitle={
          me.role === 'admin'
            ? 'Every grant: who may use or manage which object.'
            : 'Grants you or your teams hold, and grants on objects you manage.'
        }
      />
      <GrantFilters
        subject={subject}
        object={object}
        onApply={(next) => setParams(Object.fromEntries(Object.entries(next).filter(([, v]) => v)))}
      />
      <PagedTable
        list={grants}
        what="Loading grants"
        empty={
          <EmptyState title={subject || object ? 'No grants match these filters' : 'No grants yet'}>
            Grant access from an object&apos;s page (its &ldquo;Who can use this&rdquo; panel), or filter by an object
            id here to grant on it.
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Who</th>
            <th scope="col">Level</th>
            <th scope="col">On</th>
            <th scope="col">Granted</th>
            <th scope="col">By</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </>
        }
        row={(g) => (
          <tr key={g.id} data-grant={g.id}>
            <td>
              <SubjectName id={g.subject} />
            </td>
            <td>
              <span className={`grant-level grant-level-${g.level}`}>{g.level}</span>
            </td>
            <td>
              <ObjectLink id={g.object} />
            </td>
            <td>
              <Time at={g.created_at} />
            </td>
            <td>
              <SubjectName id={g.created_by} showKind={false} />
            </td>
            <td>
              {canRevoke(g) ? (
                <ConfirmButton
                  question={`Revoke ${g.level} on ${g.object}?`}
                  detail={
                    <p>
                      <SubjectName id={g.subject} /> loses {g.level} on it at once.
                    </p>
                  }
                  confirmLabel="Revoke"
                  onConfirm={() => revoke.mutate(g.id)}
                  disabled={revoke.isPending}
                >
                  Revoke
                </ConfirmButton>
              ) : null}
            </td>
          </tr>
        )}
      />
      <FormError error={revoke.error} />
      {object && ID.test(object) ? <AccessPanel objectId={object} /> : null}
    </>
  );
}

function GrantFilters({
  subject,
  object,
  onApply,
}: {
  subject: string;
  object: string;
  onApply(next: { subject: string; object: string }): void;
}) {
  const [kind, setKind] = useState<SubjectKind>(subject.startsWith('usr_') ? 'user' : 'team');
  const [subjectDraft, setSubjectDraft] = useState(subject);
  const [objectDraft, setObjectDraft] = useState(object);
  const objectBad = objectDraft.trim() !== '' && !ID.test(objectDraft.trim());
  function submit(e: FormEvent) {
    e.preventDefault();
    if (objectBad) return;
    onApply({ subject: subjectDraft, object: objectDraft.trim() });
  }
  return (
    <form className="filters" onSubmit={submit} noValidate aria-label="Filter grants">
      <Field label="Subject kind" name="subject_kind">
        {(p) => (
          <select
            {...p}
            value={kind}
            onChange={(e) => {
              setKind(e.target.value as SubjectKind);
              setSubjectDraft('');
            }}
          >
            <option value="team">Team</option>
            <option value="user">User</option>
          </select>
        )}
      </Field>
      <Field label={kind === 'team' ? 'Team' : 'User'} name="subject">
        {(p) => <SubjectPicker kind={kind} value={subjectDraft} onChange={setSubjectDraft} controlProps={p} anyLabel />}
      </Field>
      <Field label="Object id" name="object" localErrors={objectBad ? ['An object id looks like inv_01J…'] : []}>
        {(p) => (
          <input
            {...p}
            className="mono"
            placeholder="inv_…, tpl_…, team_…"
            value={objectDraft}
            onChange={(e) => setObjectDraft(e.target.value)}
          />
        )}
      </Field>
      <div className="form-actions">
        <button type="submit" className="btn btn-primary">
          Filter
        </button>
        {subject || object ? (
          <button
            type="button"
            className="btn"
            onClick={() => {
              setSubjectDraft('');
              setObjectDraft('');
              onApply({ subject: '', object: '' });
            }}
          >
            Clear filters
          </button>
        ) : null}
      </div>
    </form>
  );
}
