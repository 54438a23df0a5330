// A new credential.
import { PageHeader } from '../../ui/layout';
import { CredentialForm } from './CredentialForm';

export default function CredentialNewPage() {
  return (
    <>
      <PageHeader title="New credential" subtitle="Secrets are encrypted when saved and never shown again." />
      <CredentialForm />
    </>
  );
}
