// Registering a project: the server resolves the branch head with git before it saves.
import { PageHeader } from '../../ui/layout';
import { ProjectForm } from './ProjectForm';

export default function ProjectNewPage() {
  return (
    <>
      <PageHeader title="New project" subtitle="Baton checks the repository and records the branch head." />
      <ProjectForm />
    </>
  );
}
