// Editing an inventory's name and content.
import { EditObjectPage } from '../../ui/ObjectPage';
import type { Inventory } from '../projects/types';
import { InventoryForm } from './InventoryForm';

export default function InventoryEditPage() {
  return (
    <EditObjectPage<Inventory>
      collection="inventories"
      what="inventory"
      form={(i) => <InventoryForm inventory={i} />}
    />
  );
}
