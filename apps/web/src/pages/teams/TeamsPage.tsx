// Teams: groups of users that grants can name, so access is given once to the team rather than to each member.
import { type FormEvent, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { qs } from '../../api/client';
import { useApiMutation, usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { SubjectName, type TeamView } from '../../ui/AccessPanel';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';

export default function TeamsPage() {
  const canCreate = useHasRole('operator');
  const [creating, setCreating] = useState(false);
  const teams = usePagedList<TeamView>(`/v1/teams${qs({ limit: 50 })}`);
  return (
    <>
      <PageHeader
        title="Teams"
        subtitle="Grant access to a team once; its members get it."
        actions={
          canCreate && !creating ? (
            <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
              New team
            </button>
          ) : null
        }
      />
      {creating ? <CreateTeam onClose={() => setCreating(false)} /> : null}
      <PagedTable
        list={teams}
        what="Loading teams"
        empty={
          <EmptyState title="No teams yet">
            {canCreate
              ? 'Create a team, add its members, then grant it use on inventories and templates.'
              : 'An operator or admin can create teams.'}
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Name</th>
            <th scope="col">Created</th>
            <th scope="col">Created by</th>
          </>
        }
        row={(t) => (
          <tr key={t.id}>
            <td>
              <Link href={`/teams/${t.id}`}>{t.name}</Link>
            </td>
            <td>
              <Time at={t.created_at} />
            </td>
            <td>
              <SubjectName id={t.created_by} showKind={false} />
            </td>
          </tr>
        )}
      />
    </>
  );
}

function CreateTeam({ onClose }: { onClose(): void }) {
  const [name, setName] = useState('');
  const [, navigate] = useLocation();
  const create = useApiMutation<{ name: string }, TeamView>('POST', '/v1/teams', {
    invalidate: ['/v1/teams'],
    onSuccess: (team) => navigate(`/teams/${team.id}`),
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    create.mutate({ name });
  }
  return (
    <form className="card" onSubmit={submit} noValidate aria-label="New team">
      <h2>New team</h2>
      <Field label="Name" name="name" error={create.error}>
        {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} autoFocus />}
      </Field>
      <FormError error={create.error} fields={['name']} />
      <SubmitRow>
        <button type="submit" className="btn btn-primary" disabled={create.isPending}>
          Create team
        </button>
        <button type="button" className="btn" onClick={onClose}>
          Cancel
        </button>
      </SubmitRow>
    </form>
  );
}
