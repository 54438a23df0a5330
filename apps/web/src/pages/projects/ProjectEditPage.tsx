// Editing a project: a new URL, branch or credential is checked with git again.
import { useParams } from 'wouter';
import { useApi } from '../../api/hooks';
import { LoadError } from '../../ui/forms';
import { Loading, PageHeader } from '../../ui/layout';
import { ProjectForm } from './ProjectForm';
import type { Project } from './types';

export default function ProjectEditPage() {
  const { id } = useParams<{ id: string }>();
  const q = useApi<Project>(`/v1/projects/${id}`);
  return (
    <>
      <PageHeader title={q.data ? `Edit ${q.data.name}` : 'Edit project'} />
      {q.error ? <LoadError error={q.error} /> : null}
      {q.data ? <ProjectForm key={q.data.updated_at} project={q.data} /> : q.isLoading ? <Loading /> : null}
    </>
  );
}
