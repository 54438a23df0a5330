// One account: its details; for admins, change role or e-mail, reset the password, delete.
import type { Role, User } from '@baton/contracts';
import { type FormEvent, type ReactNode, useState } from 'react';
import { Link, useParams } from 'wouter';
import { useApi, useApiMutation } from '../../api/hooks';
import { useHasRole, useMe } from '../../auth/auth';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { Details, PageHeader, SecretOnce } from '../../ui/layout';
import { DeleteButton, NotLoaded, useDeleteObject } from '../../ui/ObjectPage';
import { Time } from '../../ui/Time';
import { generatePassword } from './password';
import { type PasswordChoice, PasswordFields } from './PasswordFields';
import { RoleField } from './RoleField';

type UpdateBody = { role?: Role; email?: string | null; password?: string };

export default function UserPage() {
  const { id } = useParams<{ id: string }>();
  const isAdmin = useHasRole('admin');
  const me = useMe();
  const user = useApi<User>(`/v1/users/${id}`);
  const remove = useDeleteObject('users', id, ['/v1/teams', '/v1/grants', '/v1/tokens']);

  if (user.error || !user.data) return <NotLoaded error={user.error} what="Loading user" />;
  const u = user.data;
  const self = u.id === me.user.id;
  return (
    <>
      <PageHeader
        title={u.username}
        subtitle={
          <>
            User · <Link href="/users">all users</Link>
          </>
        }
        actions={
          isAdmin && !self ? (
            <DeleteButton
              remove={remove}
              question={`Delete the user ${u.username}?`}
              detail={
                <p>
                  Their sessions and API tokens stop working at once, and they leave every team. Runs and audit entries
                  keep their id.
                </p>
              }
            >
              Delete user
            </DeleteButton>
          ) : null
        }
      />
      <FormError error={remove.error} />
      <Details
        items={[
          ['ID', <code key="id">{u.id}</code>],
          ['Role', u.role],
          ['E-mail', u.email],
          ['Created', <Time key="c" at={u.created_at} />],
          ['Updated', <Time key="u" at={u.updated_at} />],
          ...(isAdmin || self
            ? ([
                [
                  'API tokens',
                  <Link key="t" href={self ? '/tokens' : `/tokens?user=${u.id}`}>
                    {self ? 'Your tokens' : `Tokens of ${u.username}`}
                  </Link>,
                ],
              ] as Array<[string, ReactNode]>)
            : []),
        ]}
      />
      {isAdmin ? (
        <>
          <EditUser user={u} />
          <ResetPassword user={u} />
        </>
      ) : null}
    </>
  );
}

function EditUser({ user }: { user: User }) {
  const [role, setRole] = useState<Role>(user.role);
  const [email, setEmail] = useState(user.email ?? '');
  const [saved, setSaved] = useState(false);
  const update = useApiMutation<UpdateBody, User>('PUT', `/v1/users/${user.id}`, {
    invalidate: ['/v1/users'],
    onSuccess: () => setSaved(true),
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    setSaved(false);
    update.mutate({ role, email: email.trim() ? email.trim() : null });
  }
  return (
    <form className="card" onSubmit={submit} noValidate aria-label="Role and e-mail">
      <h2>Role and e-mail</h2>
      <RoleField value={role} onChange={setRole} error={update.error} />
      {role !== user.role && roleRank(role) < roleRank(user.role) ? (
        <p className="banner banner-warn">
          Their API tokens issued at a higher role stop working while the role is lower (they work again if it is
          restored).
        </p>
      ) : null}
      <Field label="E-mail" name="email" error={update.error}>
        {(p) => <input {...p} type="email" value={email} onChange={(e) => setEmail(e.target.value)} />}
      </Field>
      <FormError error={update.error} fields={['role', 'email']} />
      <SubmitRow>
        <button type="submit" className="btn btn-primary" disabled={update.isPending}>
          Save
        </button>
        {saved ? (
          <span role="status" className="muted">
            Saved.
          </span>
        ) : null}
      </SubmitRow>
    </form>
  );
}

const roleRank = (r: Role) => ['viewer', 'operator', 'admin'].indexOf(r);

function ResetPassword({ user }: { user: User }) {
  const [choice, setChoice] = useState<PasswordChoice>({ generate: true, typed: '' });
  const [shown, setShown] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const reset = useApiMutation<UpdateBody, User>('PUT', `/v1/users/${user.id}`, {
    invalidate: ['/v1/users'],
    onSuccess: (_u, body) => {
      setDone(true);
      if (choice.generate) setShown(body.password ?? null);
      setChoice({ ...choice, typed: '' });
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    setDone(false);
    setShown(null);
    reset.mutate({ password: choice.generate ? generatePassword() : choice.typed });
  }
  return (
    <form className="card" onSubmit={submit} noValidate aria-label="Reset password">
      <h2>Reset password</h2>
      <p className="muted">A new password ends {user.username}&apos;s other sessions.</p>
      {shown ? (
        <SecretOnce label={`New password of ${user.username}`} value={shown} onDone={() => setShown(null)} />
      ) : null}
      {done && !shown ? (
        <p role="status" className="muted">
          Password changed.
        </p>
      ) : null}
      <PasswordFields value={choice} onChange={setChoice} error={reset.error} label="New password" />
      <FormError error={reset.error} fields={['password']} />
      <SubmitRow>
        <button type="submit" className="btn" disabled={reset.isPending}>
          Reset password
        </button>
      </SubmitRow>
    </form>
  );
}
