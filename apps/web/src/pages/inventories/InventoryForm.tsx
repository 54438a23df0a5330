// The inventory form: name, content (INI, YAML or JSON) and how runs check its hosts' SSH keys. YAML/JSON syntax is
// checked before sending; ansible-inventory's own refusal comes back as a problem on `content` and shows under the
// same field.
import type { HostKeyChecking } from '@baton/contracts';
import { useState } from 'react';
import { useLocation } from 'wouter';
import { useApiMutation } from '../../api/hooks';
import { Field, FormError, SubmitRow } from '../../ui/forms';
import { DEFAULT_HOST_KEY_CHECKING } from '../known-hosts/host-key-checking';
import { HostKeyCheckingField } from '../known-hosts/HostKeyCheckingField';
import type { Inventory } from '../projects/types';
import { detectFormat, syntaxProblem } from './inventory-text';
import '../projects/inputs.css';

const EXAMPLE = `[web]
web1 ansible_host=10.0.0.11
web2 ansible_host=10.0.0.12

[web:vars]
http_port=8080`;

export function InventoryForm({ inventory }: { inventory?: Inventory }) {
  const [, navigate] = useLocation();
  const [name, setName] = useState(inventory?.name ?? '');
  const [content, setContent] = useState(inventory?.content ?? '');
  const [checking, setChecking] = useState<HostKeyChecking>(inventory?.host_key_checking ?? DEFAULT_HOST_KEY_CHECKING);
  const [localError, setLocalError] = useState<string | undefined>();
  const save = useApiMutation<{ name: string; content: string; host_key_checking: HostKeyChecking }, Inventory>(
    inventory ? 'PUT' : 'POST',
    inventory ? `/v1/inventories/${inventory.id}` : '/v1/inventories',
    { invalidate: ['/v1/inventories'], onSuccess: (inv) => navigate(`/inventories/${inv.id}`) },
  );

  function submit(e: React.FormEvent) {
    e.preventDefault();
    const problem = syntaxProblem(content);
    setLocalError(problem);
    if (problem) {
      save.reset();
      return;
    }
    save.mutate({ name, content, host_key_checking: checking });
  }

  return (
    <form className="input-form" onSubmit={submit} noValidate>
      <FormError error={save.error} fields={['name', 'content', 'host_key_checking']} />
      <Field label="Name" name="name" error={save.error}>
        {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" />}
      </Field>
      <Field
        label="Content"
        name="content"
        error={save.error}
        localErrors={localError ? [localError] : []}
        hint={
          <>
            INI, YAML or JSON, checked with <code>ansible-inventory</code> when saved
            {content.trim() ? ` (this reads as ${detectFormat(content).toUpperCase()})` : ''}.
          </>
        }
      >
        {(p) => (
          <textarea
            {...p}
            className="content-editor"
            value={content}
            placeholder={EXAMPLE}
            spellCheck={false}
            rows={18}
            onChange={(e) => {
              setContent(e.target.value);
              setLocalError(undefined);
            }}
          />
        )}
      </Field>
      <HostKeyCheckingField
        value={checking}
        onChange={setChecking}
        error={save.error}
        what="its hosts’ SSH host keys"
      />
      <SubmitRow>
        <button type="submit" className="btn btn-primary" disabled={save.isPending}>
          {save.isPending ? 'Checking…' : inventory ? 'Save inventory' : 'Create inventory'}
        </button>
        <button
          type="button"
          className="btn"
          onClick={() => navigate(inventory ? `/inventories/${inventory.id}` : '/inventories')}
        >
          Cancel
        </button>
      </SubmitRow>
    </form>
  );
}
