// Editing an inventory's name and content.
import { useParams } from 'wouter';
import { useApi } from '../../api/hooks';
import { LoadError } from '../../ui/forms';
import { Loading, PageHeader } from '../../ui/layout';
import type { Inventory } from '../projects/types';
import { InventoryForm } from './InventoryForm';

export default function InventoryEditPage() {
  const { id } = useParams<{ id: string }>();
  const q = useApi<Inventory>(`/v1/inventories/${id}`);
  return (
    <>
      <PageHeader title={q.data ? `Edit ${q.data.name}` : 'Edit inventory'} />
      {q.error ? <LoadError error={q.error} /> : null}
      {q.data ? <InventoryForm key={q.data.updated_at} inventory={q.data} /> : q.isLoading ? <Loading /> : null}
    </>
  );
}
