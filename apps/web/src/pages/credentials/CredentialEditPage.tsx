// Editing a credential: secrets start blank, and blank keeps the stored value.
import { useParams } from 'wouter';
import { useApi } from '../../api/hooks';
import { LoadError } from '../../ui/forms';
import { Loading, PageHeader } from '../../ui/layout';
import type { Credential } from '../projects/types';
import { CredentialForm } from './CredentialForm';

export default function CredentialEditPage() {
  const { id } = useParams<{ id: string }>();
  const q = useApi<Credential>(`/v1/credentials/${id}`);
  return (
    <>
      <PageHeader title={q.data ? `Edit ${q.data.name}` : 'Edit credential'} />
      {q.error ? <LoadError error={q.error} /> : null}
      {q.data ? <CredentialForm key={q.data.updated_at} credential={q.data} /> : q.isLoading ? <Loading /> : null}
    </>
  );
}
