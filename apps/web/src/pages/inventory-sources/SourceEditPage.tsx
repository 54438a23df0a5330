// Editing an inventory source's definition (its refresh state stays).
import { useParams } from 'wouter';
import { useApi } from '../../api/hooks';
import { LoadError } from '../../ui/forms';
import { Loading, PageHeader } from '../../ui/layout';
import type { InventorySource } from '../projects/types';
import { SourceForm } from './SourceForm';

export default function SourceEditPage() {
  const { id } = useParams<{ id: string }>();
  const q = useApi<InventorySource>(`/v1/inventory-sources/${id}`);
  return (
    <>
      <PageHeader title={q.data ? `Edit ${q.data.name}` : 'Edit inventory source'} />
      {q.error ? <LoadError error={q.error} /> : null}
      {q.data ? <SourceForm key={q.data.updated_at} source={q.data} /> : q.isLoading ? <Loading /> : null}
    </>
  );
}
