// Credentials: secrets runs and projects use. Lists show names and which secrets are set, never a value.
import { Link } from 'wouter';
import { usePagedList } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { EmptyState, PageHeader } from '../../ui/layout';
import { PagedTable } from '../../ui/PagedTable';
import { Time } from '../../ui/Time';
import type { Credential } from '../projects/types';
import { CREDENTIAL_TYPE_SPECS } from './credential-types';
import '../projects/inputs.css';

export default function CredentialsPage() {
  const canCreate = useHasRole('operator');
  const list = usePagedList<Credential>('/v1/credentials');
  return (
    <>
      <PageHeader
        title="Credentials"
        subtitle="SSH keys, passwords, tokens and variables. Secrets are encrypted and never shown again."
        actions={
          canCreate ? (
            <Link href="/credentials/new" className="btn btn-primary">
              New credential
            </Link>
          ) : null
        }
      />
      <PagedTable
        list={list}
        what="Loading credentials"
        caption="Credentials"
        empty={
          <EmptyState title="No credentials yet">
            {canCreate
              ? 'Add an SSH key, a vault password, a token or environment variables with “New credential”.'
              : 'You see the credentials you are granted. Ask an operator to grant you one.'}
          </EmptyState>
        }
        head={
          <>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Description</th>
            <th scope="col">Secrets set</th>
            <th scope="col">Updated</th>
          </>
        }
        row={(c) => (
          <tr key={c.id}>
            <td>
              <Link href={`/credentials/${c.id}`}>{c.name}</Link>
            </td>
            <td>{CREDENTIAL_TYPE_SPECS[c.type]?.label ?? c.type}</td>
            <td>{c.description ?? <span className="muted">—</span>}</td>
            <td className="mono">
              {c.needs_secret ? (
                <strong>needs its secret</strong>
              ) : (
                c.secret_fields.join(', ') || <span className="muted">—</span>
              )}
            </td>
            <td>
              <Time at={c.updated_at} />
            </td>
          </tr>
        )}
      />
    </>
  );
}
