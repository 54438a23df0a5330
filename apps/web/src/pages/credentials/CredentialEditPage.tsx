// Editing a credential: secrets start blank, and blank keeps the stored value.
import { EditObjectPage } from '../../ui/ObjectPage';
import type { Credential } from '../projects/types';
import { CredentialForm } from './CredentialForm';

export default function CredentialEditPage() {
  return (
    <EditObjectPage<Credential>
      collection="credentials"
      what="credential"
      form={(c) => <CredentialForm credential={c} />}
    />
  );
}
