// The project form: create (POST) or edit (PUT with only what changed, so an unchanged URL is not resolved again).
// Besides the repository: the Galaxy server its requirements install from, and how git over SSH checks the server.
import type { HostKeyChecking } from '@baton/contracts';
import { useState } from 'react';
import { useLocation } from 'wouter';
import { useApiMutation } from '../../api/hooks';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { DEFAULT_HOST_KEY_CHECKING } from '../known-hosts/host-key-checking';
import { HostKeyCheckingField } from '../known-hosts/HostKeyCheckingField';
import { ObjectSelect } from './objects';
import type { Project } from './types';
import './inputs.css';

const FIELDS = ['name', 'git_url', 'branch', 'credential_id', 'galaxy_credential_id', 'host_key_checking'];

export function ProjectForm({ project }: { project?: Project }) {
  const [, navigate] = useLocation();
  const [name, setName] = useState(project?.name ?? '');
  const [gitUrl, setGitUrl] = useState(project?.git_url ?? '');
  const [branch, setBranch] = useState(project?.branch ?? 'main');
  const [credentialId, setCredentialId] = useState(project?.credential_id ?? '');
  const [galaxyId, setGalaxyId] = useState(project?.galaxy_credential_id ?? '');
  const [checking, setChecking] = useState<HostKeyChecking>(project?.host_key_checking ?? DEFAULT_HOST_KEY_CHECKING);
  const save = useApiMutation<Record<string, unknown>, Project>(
    project ? 'PUT' : 'POST',
    project ? `/v1/projects/${project.id}` : '/v1/projects',
    { invalidate: ['/v1/projects'], onSuccess: (p) => navigate(`/projects/${p.id}`) },
  );

  function submit(e: React.FormEvent) {
    e.preventDefault();
    if (!project) {
      save.mutate({
        name,
        git_url: gitUrl,
        branch,
        ...(credentialId ? { credential_id: credentialId } : {}),
        ...(galaxyId ? { galaxy_credential_id: galaxyId } : {}),
        host_key_checking: checking,
      });
      return;
    }
    const changes: Record<string, unknown> = {};
    if (name !== project.name) changes.name = name;
    if (gitUrl !== project.git_url) changes.git_url = gitUrl;
    if (branch !== project.branch) changes.branch = branch;
    if (credentialId !== (project.credential_id ?? '')) changes.credential_id = credentialId || null;
    if (galaxyId !== (project.galaxy_credential_id ?? '')) changes.galaxy_credential_id = galaxyId || null;
    if (checking !== project.host_key_checking) changes.host_key_checking = checking;
    if (Object.keys(changes).length === 0) navigate(`/projects/${project.id}`);
    else save.mutate(changes);
  }

  return (
    <form className="input-form" onSubmit={submit} noValidate>
      <FormError error={save.error} fields={FIELDS} />
      <Field label="Name" name="name" error={save.error}>
        {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" />}
      </Field>
      <Field
        label="Git URL"
        name="git_url"
        error={save.error}
        hint="https://, ssh://, git:// or file:///, or user@host:path. No password in the URL: attach a credential."
      >
        {(p) => (
          <input
            {...p}
            value={gitUrl}
            onChange={(e) => setGitUrl(e.target.value)}
            required
            autoComplete="off"
            spellCheck={false}
            className="mono"
          />
        )}
      </Field>
      <Field label="Branch" name="branch" error={save.error}>
        {(p) => (
          <input
            {...p}
            value={branch}
            onChange={(e) => setBranch(e.target.value)}
            autoComplete="off"
            spellCheck={false}
          />
        )}
      </Field>
      <Field
        label="Credential"
        name="credential_id"
        error={save.error}
        hint="A token or SSH key credential, when the repository needs one."
      >
        {(p) => (
          <ObjectSelect
            kind="credentials"
            types={['token', 'ssh_key']}
            noneLabel="None (public repository)"
            value={credentialId}
            onChange={setCredentialId}
            {...p}
          />
        )}
      </Field>
      <Field
        label="Galaxy server"
        name="galaxy_credential_id"
        error={save.error}
        hint={
          <>
            A Galaxy credential (server URL and token) for the collections and roles its requirements files name
            (collections/requirements.yml, roles/requirements.yml). Without one, ansible-galaxy uses its default server.
          </>
        }
      >
        {(p) => (
          <ObjectSelect
            kind="credentials"
            types={['galaxy']}
            noneLabel="None (ansible-galaxy’s default server)"
            value={galaxyId}
            onChange={setGalaxyId}
            {...p}
          />
        )}
      </Field>
      <HostKeyCheckingField
        value={checking}
        onChange={setChecking}
        error={save.error}
        what="the git server’s SSH host key (git over SSH only)"
      />
      <SubmitRow>
        <button type="submit" className="btn btn-primary" disabled={save.isPending}>
          {save.isPending ? 'Checking the repository…' : project ? 'Save project' : 'Create project'}
        </button>
        <button
          type="button"
          className="btn"
          onClick={() => navigate(project ? `/projects/${project.id}` : '/projects')}
        >
          Cancel
        </button>
      </SubmitRow>
    </form>
  );
}
