// Editing a project: a new URL, branch or credential is checked with git again.
import { EditObjectPage } from '../../ui/ObjectPage';
import { ProjectForm } from './ProjectForm';
import type { Project } from './types';

export default function ProjectEditPage() {
  return <EditObjectPage<Project> collection="projects" what="project" form={(p) => <ProjectForm project={p} />} />;
}
