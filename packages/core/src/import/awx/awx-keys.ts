// AWX natural keys as plan keys. awxkit writes `{type, <NATURAL_KEY fields>}` with related keys nested; the same
// object always yields the same string, whichever side of a reference it is read from.

type Loose = Record<string, unknown> | null | undefined;

const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const obj = (v: unknown): Loose =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Loose) : undefined;

/** The organization's name inside a key or an object (`organization: {name, type}`), '' when there is none. */
export const orgOf = (o: Loose): string => text(obj(o?.organization)?.name);

const ORG_SCOPED = new Set([
  'team',
  'project',
  'inventory',
  'job_template',
  'workflow_job_template',
  'notification_template',
]);

/** The plan key of the object a natural key names, or undefined when the key is not one. */
export function keyOf(nk: unknown): string | undefined {
  const k = obj(nk);
  if (!k) return undefined;
  const type = text(k.type);
  const name = text(k.name);
  switch (type) {
    case 'user':
      return text(k.username) ? `user:${text(k.username)}` : undefined;
    case 'organization':
      return name ? `organization:${name}` : undefined;
    case 'credential': {
      const ct = obj(k.credential_type);
      return name ? `credential:${orgOf(k)}/${name}/${text(ct?.kind)}:${text(ct?.name)}` : undefined;
    }
    case 'inventory_source': {
      const inv = keyOf(k.inventory);
      return name && inv ? `inventory_source:${inv.slice('inventory:'.length)}/${name}` : undefined;
    }
    case 'workflow_job_template_node': {
      const wf = keyOf(k.workflow_job_template);
      return wf && text(k.identifier) ? `${wf}#${text(k.identifier)}` : undefined;
    }
    default:
      return name && ORG_SCOPED.has(type) ? `${type}:${orgOf(k)}/${name}` : name ? `${type}:${name}` : undefined;
  }
}

/** The key of an exported object: its `natural_key` when present, else one built from its own fields as `type`. */
export function keyOfObject(o: Loose, type: string): string | undefined {
  return keyOf(o?.natural_key) ?? keyOf({ ...o, type });
}
