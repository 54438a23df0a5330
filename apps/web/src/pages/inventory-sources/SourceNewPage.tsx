// A new dynamic inventory source.
import { PageHeader } from '../../ui/layout';
import { SourceForm } from './SourceForm';

export default function SourceNewPage() {
  return (
    <>
      <PageHeader title="New inventory source" subtitle="Fills an inventory from a script, a plugin or a URL." />
      <SourceForm />
    </>
  );
}
