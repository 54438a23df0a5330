// The inventory form: name and content (INI, YAML or JSON). YAML/JSON syntax is checked before sending;
// ansible-inventory's own refusal comes back as a problem on `content` and shows under the same field.
import { useState } from 'react';
import { useLocation } from 'wouter';
import { useApiMutation } from '../../api/hooks';
import { Field, FormError, SubmitRow } from '../../ui/forms';
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
  const [localError, setLocalError] = useState<string | undefined>();
  const save = useApiMutation<{ name: string; content: string }, Inventory>(
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
    save.mutate({ name, content });
  }

  return (
    <form className="input-form" onSubmit={submit} noValidate>
      <FormError error={save.error} fields={['name', 'content']} />
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
