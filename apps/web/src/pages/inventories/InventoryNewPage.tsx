// A new stored inventory.
import { PageHeader } from '../../ui/layout';
import { InventoryForm } from './InventoryForm';

export default function InventoryNewPage() {
  return (
    <>
      <PageHeader title="New inventory" subtitle="Hosts and groups runs can target." />
      <InventoryForm />
    </>
  );
}
