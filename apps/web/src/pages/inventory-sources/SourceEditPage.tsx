// Editing an inventory source's definition (its refresh state stays).
import { EditObjectPage } from '../../ui/ObjectPage';
import type { InventorySource } from '../projects/types';
import { SourceForm } from './SourceForm';

export default function SourceEditPage() {
  return (
    <EditObjectPage<InventorySource>
      collection="inventory-sources"
      what="inventory source"
      form={(s) => <SourceForm source={s} />}
    />
  );
}
