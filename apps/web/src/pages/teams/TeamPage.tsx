// One team: its members (add and remove for those who manage it), who may manage it, and deleting it.
import type { Role } from '@baton/contracts';
import { type FormEvent, useState } from 'react';
import { Link, useParams } from 'wouter';
import { qs } from '../../api/client';
import { useApi, useApiMutation, usePagedList } from '../../api/hooks';
import { AccessPanel, SubjectName, SubjectPicker, type TeamView, useCanManage } from '../../ui/AccessPanel';
import { ConfirmButton } from '../../ui/Confirm';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { Details, EmptyState, PageHeader } from '../../ui/layout';
import { DeleteButton, NotLoaded, useDeleteObject } from '../../ui/ObjectPage';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';

interface TeamMember {
  user_id: string;
  username: string;
  role: Role;
  added_at: string;
}

export default function TeamPage() {
  const { id } = useParams<{ id: string }>();
  const team = useApi<TeamView>(`/v1/teams/${id}`);
  const canManage = useCanManage(id);
  const remove = useDeleteObject('teams', id, ['/v1/grants']);

  if (team.error || !team.data) return <NotLoaded error={team.error} what="Loading team" />;
  const t = team.data;
  return (
    <>
      <PageHeader
        title={t.name}
        subtitle={
          <>
            Team · <Link href="/teams">all teams</Link>
          </>
        }
        actions={
          canManage ? (
            <DeleteButton
              remove={remove}
              question={`Delete the team ${t.name}?`}
              detail={<p>Its memberships and every grant it holds go with it; its members lose that access at once.</p>}
            >
              Delete team
            </DeleteButton>
          ) : null
        }
      />
      <FormError error={remove.error} />
      <Details
        items={[
          ['ID', <code key="id">{t.id}</code>],
          ['Created', <Time key="c" at={t.created_at} />],
          ['Created by', <SubjectName key="by" id={t.created_by} showKind={false} />],
        ]}
      />
      <Members teamId={id} canManage={canManage} />
      <AccessPanel objectId={id} />
    </>
  );
}

function Members({ teamId, canManage }: { teamId: string; canManage: boolean }) {
  const members = usePagedList<TeamMember>(`/v1/teams/${teamId}/members${qs({ limit: 100 })}`);
  const removeMember = useApiMutation<string, void>('DELETE', (userId) => `/v1/teams/${teamId}/members/${userId}`, {
    invalidate: [`/v1/teams/${teamId}/members`],
  });
  return (
    <section className="card" aria-labelledby="members-heading">
      <h2 id="members-heading">Members</h2>
      <PagedTable
        list={members}
        what="Loading members"
        empty={
          <EmptyState title="No members yet">
            {canManage
              ? 'Add users below; they get every grant the team holds.'
              : 'Whoever manages the team can add members.'}
          </EmptyState>
        }
        head={
          <>
            <th scope="col">User</th>
            <th scope="col">Role</th>
            <th scope="col">Added</th>
            {canManage ? (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            ) : null}
          </>
        }
        row={(m) => (
          <tr key={m.user_id}>
            <td>
              <Link href={`/users/${m.user_id}`}>{m.username}</Link>
            </td>
            <td>{m.role}</td>
            <td>
              <Time at={m.added_at} />
            </td>
            {canManage ? (
              <td>
                <ConfirmButton
                  question={`Remove ${m.username} from the team?`}
                  detail={<p>They lose the access the team's grants give them at once.</p>}
                  confirmLabel="Remove"
                  onConfirm={() => removeMember.mutate(m.user_id)}
                  disabled={removeMember.isPending}
                >
                  Remove
                </ConfirmButton>
              </td>
            ) : null}
          </tr>
        )}
      />
      <FormError error={removeMember.error} />
      {canManage ? <AddMember teamId={teamId} /> : null}
    </section>
  );
}

function AddMember({ teamId }: { teamId: string }) {
  const [userId, setUserId] = useState('');
  const [missing, setMissing] = useState(false);
  const add = useApiMutation<{ user_id: string }, TeamMember>('POST', `/v1/teams/${teamId}/members`, {
    invalidate: [`/v1/teams/${teamId}/members`],
    onSuccess: () => {
      setUserId('');
      setMissing(false);
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    if (!userId) setMissing(true);
    else add.mutate({ user_id: userId });
  }
  return (
    <form onSubmit={submit} noValidate aria-label="Add a member" className="add-member">
      <div className="filters">
        <Field
          label="Add a user"
          name="user_id"
          error={add.error}
          localErrors={missing && !userId ? ['Choose a user.'] : []}
        >
          {(p) => <SubjectPicker kind="user" value={userId} onChange={setUserId} controlProps={p} />}
        </Field>
        <SubmitRow>
          <button type="submit" className="btn btn-primary" disabled={add.isPending}>
            Add member
          </button>
        </SubmitRow>
      </div>
      <FormError error={add.error} fields={['user_id']} />
    </form>
  );
}
