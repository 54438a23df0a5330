// The inventory source form: the fields each kind needs (project and path, or a URL and token).
import type { InventorySourceKind } from '@baton/contracts';
import { useState } from 'react';
import { useLocation } from 'wouter';
import { useApiMutation } from '../../api/hooks';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { ObjectSelect } from '../projects/objects';
import type { InventorySource } from '../projects/types';
import { KIND_HINT, KIND_LABEL } from './kinds';
import '../projects/inputs.css';

const FIELDS = ['name', 'kind', 'inventory_id', 'project_id', 'path', 'url', 'credential_id', 'refresh_interval_s'];

export function SourceForm({ source }: { source?: InventorySource }) {
  const [, navigate] = useLocation();
  const [name, setName] = useState(source?.name ?? '');
  const [kind, setKind] = useState<InventorySourceKind>(source?.kind ?? 'script');
  const [inventoryId, setInventoryId] = useState(source?.inventory_id ?? '');
  const [projectId, setProjectId] = useState(source?.project_id ?? '');
  const [path, setPath] = useState(source?.path ?? '');
  const [url, setUrl] = useState(source?.url ?? '');
  const [credentialId, setCredentialId] = useState(source?.credential_id ?? '');
  const [interval, setRefreshInterval] = useState(source?.refresh_interval_s?.toString() ?? '');
  const save = useApiMutation<Record<string, unknown>, InventorySource>(
    source ? 'PUT' : 'POST',
    source ? `/v1/inventory-sources/${source.id}` : '/v1/inventory-sources',
    { invalidate: ['/v1/inventory-sources'], onSuccess: (s) => navigate(`/inventory-sources/${s.id}`) },
  );

  function submit(e: React.FormEvent) {
    e.preventDefault();
    const fromProject = kind !== 'url';
    // A PUT replaces the whole definition: send every field the kind uses, and nothing it forbids.
    save.mutate({
      name,
      kind,
      inventory_id: inventoryId,
      ...(fromProject
        ? { project_id: projectId || null, path: path || null }
        : { url: url || null, credential_id: credentialId || null }),
      refresh_interval_s: interval.trim() === '' ? null : Number(interval),
    });
  }

  return (
    <form className="input-form" onSubmit={submit} noValidate>
      <FormError error={save.error} fields={FIELDS} />
      <Field label="Name" name="name" error={save.error}>
        {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" />}
      </Field>
      <Field label="Kind" name="kind" error={save.error} hint={KIND_HINT[kind]}>
        {(p) => (
          <select {...p} value={kind} onChange={(e) => setKind(e.target.value as InventorySourceKind)}>
            {(Object.keys(KIND_LABEL) as InventorySourceKind[]).map((k) => (
              <option key={k} value={k}>
                {KIND_LABEL[k]}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label="Target inventory"
        name="inventory_id"
        error={save.error}
        hint="A refresh replaces this inventory's content with what the source returns."
      >
        {(p) => <ObjectSelect kind="inventories" value={inventoryId} onChange={setInventoryId} {...p} />}
      </Field>
      {kind === 'url' ? (
        <>
          <Field label="URL" name="url" error={save.error} hint="https only; no credentials in the URL.">
            {(p) => (
              <input
                {...p}
                type="url"
                className="mono"
                value={url}
                onChange={(e) => setUrl(e.target.value)}
                autoComplete="off"
                spellCheck={false}
              />
            )}
          </Field>
          <Field label="Token credential" name="credential_id" error={save.error}>
            {(p) => (
              <ObjectSelect
                kind="credentials"
                types={['token']}
                noneLabel="None"
                value={credentialId}
                onChange={setCredentialId}
                {...p}
              />
            )}
          </Field>
        </>
      ) : (
        <>
          <Field label="Project" name="project_id" error={save.error}>
            {(p) => <ObjectSelect kind="projects" value={projectId} onChange={setProjectId} {...p} />}
          </Field>
          <Field
            label="Path in the project"
            name="path"
            error={save.error}
            hint={kind === 'script' ? 'e.g. inventory/cmdb.py' : 'e.g. inventory/constructed.yml'}
          >
            {(p) => (
              <input
                {...p}
                className="mono"
                value={path}
                onChange={(e) => setPath(e.target.value)}
                autoComplete="off"
                spellCheck={false}
              />
            )}
          </Field>
        </>
      )}
      <Field
        label="Refresh interval (seconds)"
        name="refresh_interval_s"
        error={save.error}
        hint="Optional, at least 60. Stored for scheduled refreshes; refresh by hand with the Refresh button."
      >
        {(p) => (
          <input
            {...p}
            type="number"
            inputMode="numeric"
            min={60}
            value={interval}
            onChange={(e) => setRefreshInterval(e.target.value)}
          />
        )}
      </Field>
      <SubmitRow>
        <button type="submit" className="btn btn-primary" disabled={save.isPending}>
          {source ? 'Save source' : 'Create source'}
        </button>
        <button
          type="button"
          className="btn"
          onClick={() => navigate(source ? `/inventory-sources/${source.id}` : '/inventory-sources')}
        >
          Cancel
        </button>
      </SubmitRow>
    </form>
  );
}
