// "Who can use this": the grants on one object, and (for those who manage it) granting and revoking.
import type { GrantLevel, User } from '@baton/contracts';
import { type FormEvent, useId, useState } from 'react';
import { Link } from 'wouter';
import { qs } from '../api/client';
import { useApi, useApiMutation, usePagedList } from '../api/hooks';
import { useMe } from '../auth/auth';
import { ConfirmButton } from './Confirm';
import { Field, FormError, LoadError, SubmitRow } from './forms';
import { EmptyState } from './layout';
import { PagedTable } from './PagedTable';
import { Time } from './Time';
import './access-panel.css';

/** A grant as GET /v1/grants answers it. */
export interface GrantView {
  id: string;
  subject: string;
  object: string;
  level: GrantLevel;
  created_at: string;
  created_by: string;
}

/** A team as GET /v1/teams answers it. */
export interface TeamView {
  id: string;
  name: string;
  created_at: string;
  created_by: string;
}

const LEVEL_WORDS: Record<GrantLevel, string> = {
  use: 'Use — see it and launch with it',
  manage: 'Manage — also change, delete and grant it',
};

export const isTeamId = (id: string): boolean => id.startsWith('team_');

/** A user's or team's name (the id while loading or when it is gone), linking to its page. */
export function SubjectName({ id, showKind = true }: { id: string; showKind?: boolean }) {
  const team = isTeamId(id);
  const q = useApi<User | TeamView>(team ? `/v1/teams/${id}` : `/v1/users/${id}`, { retry: false, staleTime: 60_000 });
  const name = q.data ? ('username' in q.data ? q.data.username : q.data.name) : null;
  return (
    <span className="subject">
      {showKind ? <span className="subject-kind">{team ? 'Team' : 'User'}</span> : null}{' '}
      <Link href={team ? `/teams/${id}` : `/users/${id}`}>{name ?? <code>{id}</code>}</Link>
    </span>
  );
}

const grantsOnPath = (objectId: string) => `/v1/grants${qs({ object: objectId, limit: 100 })}`;

/**
 * Whether the caller manages an object, read from the grants the API lets them see on it: a non-admin sees grants
 * they (or their teams) hold and grants on objects they manage, so a visible `manage` grant means they manage it.
 * Only for showing or hiding actions: the API stays the judge.
 */
function managesFrom(role: string, grants: GrantView[]): boolean {
  return role === 'admin' || (role !== 'viewer' && grants.some((g) => g.level === 'manage'));
}

/** Whether the signed-in user may change `objectId` (delete it, grant on it…), as far as the UI can tell. */
export function useCanManage(objectId: string): boolean {
  const me = useMe();
  const grants = usePagedList<GrantView>(me.role === 'admin' || me.role === 'viewer' ? null : grantsOnPath(objectId));
  return managesFrom(me.role, grants.items);
}

/**
 * Grants on `objectId`, with a form to grant and revoke for callers who manage it (see `managesFrom`).
 */
export function AccessPanel({ objectId }: { objectId: string }) {
  const me = useMe();
  const headingId = useId();
  const grants = usePagedList<GrantView>(grantsOnPath(objectId));
  const canManage = managesFrom(me.role, grants.items);
  const revoke = useApiMutation<string, void>('DELETE', (id) => `/v1/grants/${id}`, { invalidate: ['/v1/grants'] });

  return (
    <section className="card access-panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Who can use this</h2>
      <PagedTable
        list={grants}
        what="Loading grants"
        caption={`Grants on ${objectId}`}
        empty={
          <EmptyState title="No grants on this object">
            {canManage
              ? 'Only admins can use it now. Grant a user or a team below.'
              : 'Admins can use it; ask an admin or whoever manages it to grant you access.'}
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Who</th>
            <th scope="col">Level</th>
            <th scope="col">Granted</th>
            {canManage ? (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            ) : null}
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
              <Time at={g.created_at} />
            </td>
            {canManage ? (
              <td>
                <ConfirmButton
                  question={`Revoke ${g.level} from this ${isTeamId(g.subject) ? 'team' : 'user'}?`}
                  detail={
                    <p>
                      <SubjectName id={g.subject} /> loses {g.level} on {objectId} at once.
                    </p>
                  }
                  confirmLabel="Revoke"
                  onConfirm={() => revoke.mutate(g.id)}
                  disabled={revoke.isPending}
                >
                  Revoke
                </ConfirmButton>
              </td>
            ) : null}
          </tr>
        )}
      />
      <FormError error={revoke.error} />
      {canManage ? <GrantForm objectId={objectId} /> : null}
    </section>
  );
}

export type SubjectKind = 'user' | 'team';

function GrantForm({ objectId }: { objectId: string }) {
  const [kind, setKind] = useState<SubjectKind>('team');
  const [subject, setSubject] = useState('');
  const [level, setLevel] = useState<GrantLevel>('use');
  const [missing, setMissing] = useState(false);
  const grant = useApiMutation<{ subject: string; object: string; level: GrantLevel }, GrantView>(
    'POST',
    '/v1/grants',
    {
      invalidate: ['/v1/grants'],
      onSuccess: () => {
        setSubject('');
        setMissing(false);
      },
    },
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    if (!subject) {
      setMissing(true);
      return;
    }
    grant.mutate({ subject, object: objectId, level });
  }

  return (
    <form className="grant-form" onSubmit={submit} noValidate aria-label="Grant access">
      <h3>Grant access</h3>
      <div className="filters">
        <Field label="Grant to" name="subject_kind">
          {(p) => (
            <select
              {...p}
              value={kind}
              onChange={(e) => {
                setKind(e.target.value as SubjectKind);
                setSubject('');
              }}
            >
              <option value="team">A team</option>
              <option value="user">A user</option>
            </select>
          )}
        </Field>
        <Field
          label={kind === 'team' ? 'Team' : 'User'}
          name="subject"
          error={grant.error}
          localErrors={missing && !subject ? [`Choose a ${kind}.`] : []}
        >
          {(p) => <SubjectPicker kind={kind} value={subject} onChange={setSubject} controlProps={p} />}
        </Field>
        <Field label="Level" name="level" error={grant.error}>
          {(p) => (
            <select {...p} value={level} onChange={(e) => setLevel(e.target.value as GrantLevel)}>
              <option value="use">{LEVEL_WORDS.use}</option>
              <option value="manage">{LEVEL_WORDS.manage}</option>
            </select>
          )}
        </Field>
      </div>
      <FormError error={grant.error} fields={['subject', 'level']} />
      <SubmitRow>
        <button type="submit" className="btn btn-primary" disabled={grant.isPending}>
          {grant.isPending ? 'Granting…' : 'Grant'}
        </button>
      </SubmitRow>
    </form>
  );
}

/** A select of users or teams, loaded a page at a time (the last option loads more); `controlProps` from <Field>. */
export function SubjectPicker({
  kind,
  value,
  onChange,
  controlProps,
  anyLabel = false,
}: {
  kind: SubjectKind;
  value: string;
  onChange(id: string): void;
  controlProps: { id: string; 'aria-invalid': boolean; 'aria-describedby'?: string };
  /** the empty choice means "any" (a filter), not "none chosen yet" */
  anyLabel?: boolean;
}) {
  const users = usePagedList<User>(kind === 'user' ? `/v1/users${qs({ limit: 200 })}` : null);
  const teams = usePagedList<TeamView>(kind === 'team' ? `/v1/teams${qs({ limit: 200 })}` : null);
  const list = kind === 'user' ? users : teams;
  const options =
    kind === 'user'
      ? users.items.map((u) => ({ id: u.id, label: `${u.username} (${u.role})` }))
      : teams.items.map((t) => ({ id: t.id, label: t.name }));
  return (
    <>
      <select
        {...controlProps}
        value={value}
        onChange={(e) => {
          if (e.target.value === '__more') list.loadMore();
          else onChange(e.target.value);
        }}
      >
        <option value="">{list.isLoading ? 'Loading…' : anyLabel ? `Any ${kind}` : `Choose a ${kind}`}</option>
        {options.map((o) => (
          <option key={o.id} value={o.id}>
            {o.label}
          </option>
        ))}
        {list.hasMore ? <option value="__more">Load more…</option> : null}
      </select>
      {list.error ? <LoadError error={list.error} /> : null}
    </>
  );
}
