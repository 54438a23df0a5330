// One credential: its public inputs and which secrets are set (never their values).
import { Link, useParams } from 'wouter';
import { useApi } from '../../api/hooks';
import { AccessPanel, useCanManage } from '../../ui/AccessPanel';
import { Details, PageHeader } from '../../ui/layout';
import { DeleteButton, NotLoaded, useDeleteObject } from '../../ui/ObjectPage';
import { Time } from '../../ui/Time';
import { DeleteError } from '../projects/objects';
import type { Credential } from '../projects/types';
import { CREDENTIAL_TYPE_SPECS } from './credential-types';
import '../projects/inputs.css';

export default function CredentialPage() {
  const { id } = useParams<{ id: string }>();
  const canManage = useCanManage(id);
  const q = useApi<Credential>(`/v1/credentials/${id}`);
  const remove = useDeleteObject('credentials', id);
  const cred = q.data;
  if (q.error || !cred) return <NotLoaded error={q.error} what="Loading the credential" />;
  const spec = CREDENTIAL_TYPE_SPECS[cred.type];
  const labelOf = (input: string) => spec?.inputs.find((i) => i.name === input)?.label ?? input;
  return (
    <>
      <PageHeader
        title={cred.name}
        subtitle={cred.description ?? spec?.purpose}
        actions={
          canManage ? (
            <>
              <Link href={`/credentials/${id}/edit`} className="btn">
                Edit
              </Link>
              <DeleteButton
                remove={remove}
                question={`Delete the credential ${cred.name}?`}
                detail="Its secrets and grants go with it. Projects, templates or sources still using it keep it from being deleted."
              />
            </>
          ) : null
        }
      />
      <DeleteError error={remove.error} />
      <Details
        items={[
          ['Type', spec?.label ?? cred.type],
          ...Object.entries(cred.inputs).map(([k, v]): [string, React.ReactNode] => [
            labelOf(k),
            <span className="mono wrap-anywhere">{v}</span>,
          ]),
          ['Created', <Time at={cred.created_at} />],
          ['Updated', <Time at={cred.updated_at} />],
        ]}
      />
      <section aria-labelledby="secrets-heading">
        <h2 id="secrets-heading">Secrets</h2>
        <p className="muted">Encrypted at rest and never shown. Edit the credential to replace one.</p>
        {cred.needs_secret && (
          <div className="banner banner-warn" role="status" data-testid="needs-secret">
            This credential was imported without its secret. Runs and projects refuse it until you edit it and set the
            secret.
          </div>
        )}
        {cred.secret_fields.length === 0 ? (
          <p>None set.</p>
        ) : (
          <ul data-testid="secret-fields">
            {cred.secret_fields.map((f) => (
              <li key={f}>
                <span className="mono">{f.startsWith('variables.') ? f.slice('variables.'.length) : labelOf(f)}</span>:
                set
              </li>
            ))}
          </ul>
        )}
      </section>
      <AccessPanel objectId={cred.id} />
    </>
  );
}
