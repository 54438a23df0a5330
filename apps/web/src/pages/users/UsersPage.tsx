// Accounts: every signed-in user may list them (e-mail addresses for admins only); admins create them.
import type { Role, User } from '@baton/contracts';
import { type FormEvent, useState } from 'react';
import { Link } from 'wouter';
import { qs } from '../../api/client';
import { useApiMutation, usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { EmptyState, PageHeader, SecretOnce } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';
import { generatePassword } from './password';
import { type PasswordChoice, PasswordFields } from './PasswordFields';
import { RoleField } from './RoleField';

export default function UsersPage() {
  const isAdmin = useHasRole('admin');
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ username: string; password: string } | null>(null);
  const users = usePagedList<User>(`/v1/users${qs({ limit: 50 })}`);
  return (
    <>
      <PageHeader
        title="Users"
        subtitle="Accounts and their roles: viewers look, operators run and create, admins manage everything."
        actions={
          isAdmin && !creating ? (
            <button
              type="button"
              className="btn btn-primary"
              onClick={() => {
                setCreating(true);
                setCreated(null);
              }}
            >
              New user
            </button>
          ) : null
        }
      />
      {created ? (
        <SecretOnce
          label={`Password of ${created.username}`}
          value={created.password}
          onDone={() => setCreated(null)}
        />
      ) : null}
      {creating ? (
        <CreateUser
          onClose={() => setCreating(false)}
          onCreated={(username, generated) => {
            setCreating(false);
            if (generated) setCreated({ username, password: generated });
          }}
        />
      ) : null}
      <PagedTable
        list={users}
        what="Loading users"
        empty={<EmptyState title="No users">An admin can create accounts here.</EmptyState>}
        head={
          <>
            <th scope="col">Username</th>
            <th scope="col">Role</th>
            {isAdmin ? <th scope="col">E-mail</th> : null}
            <th scope="col">Created</th>
          </>
        }
        row={(u) => (
          <tr key={u.id}>
            <td>
              <Link href={`/users/${u.id}`}>{u.username}</Link>
            </td>
            <td>{u.role}</td>
            {isAdmin ? <td>{u.email ?? <span className="muted">—</span>}</td> : null}
            <td>
              <Time at={u.created_at} />
            </td>
          </tr>
        )}
      />
    </>
  );
}

interface CreateBody {
  username: string;
  role: Role;
  password: string;
  email?: string;
}

function CreateUser({
  onClose,
  onCreated,
}: {
  onClose(): void;
  /** `generated`: the password the browser made up, to show once */
  onCreated(username: string, generated: string | null): void;
}) {
  const [username, setUsername] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState<PasswordChoice>({ generate: true, typed: '' });
  const create = useApiMutation<CreateBody, User>('POST', '/v1/users', {
    invalidate: ['/v1/users'],
    onSuccess: (user, body) => onCreated(user.username, password.generate ? body.password : null),
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    create.mutate({
      username: username.trim(),
      role,
      password: password.generate ? generatePassword() : password.typed,
      ...(email.trim() ? { email: email.trim() } : {}),
    });
  }
  return (
    <form className="card" onSubmit={submit} noValidate aria-label="New user">
      <h2>New user</h2>
      <Field label="Username" name="username" error={create.error}>
        {(p) => (
          <input {...p} autoComplete="off" value={username} onChange={(e) => setUsername(e.target.value)} autoFocus />
        )}
      </Field>
      <RoleField value={role} onChange={setRole} error={create.error} />
      <Field label="E-mail (optional)" name="email" error={create.error}>
        {(p) => <input {...p} type="email" value={email} onChange={(e) => setEmail(e.target.value)} />}
      </Field>
      <PasswordFields value={password} onChange={setPassword} error={create.error} />
      <FormError error={create.error} fields={['username', 'role', 'email', 'password']} />
      <SubmitRow>
        <button type="submit" className="btn btn-primary" disabled={create.isPending}>
          Create user
        </button>
        <button type="button" className="btn" onClick={onClose}>
          Cancel
        </button>
      </SubmitRow>
    </form>
  );
}
