// A run spec (the fields of POST /v1/runs, a pipeline step, a template's or schedule's target) as a form edits it:
// text for everything typed, converted to the API's body on submit.
import type { RunIf, SubmitRunBody } from '@baton/contracts';
import { compact, optionalNumber, parseVars, parseWords, varsText } from './vars';

/** `inherit`: a pipeline step that takes the pipeline's inventory; `none`: nothing given (the API says what's missing). */
export type InventoryMode = 'stored' | 'inline' | 'inherit';

export interface RunDraft {
  source: 'inline' | 'project';
  playbook: string;
  project_id: string;
  ref: string;
  inventoryMode: InventoryMode;
  inventory_id: string;
  inventory: string;
  credential_ids: string[];
  vars: string;
  limit: string;
  check: boolean;
  shards: string;
  labels: string;
  forks: string;
  verbosity: string;
  timeout_s: string;
  /** pipeline steps only */
  name: string;
  run_if: RunIf;
}

export const PLAYBOOK_EXAMPLE = `- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.ping:
`;

export function emptyRunDraft(inventoryMode: InventoryMode = 'stored'): RunDraft {
  return {
    source: 'inline',
    playbook: '',
    project_id: '',
    ref: '',
    inventoryMode,
    inventory_id: '',
    inventory: '',
    credential_ids: [],
    vars: '',
    limit: '',
    check: false,
    shards: '',
    labels: '',
    forks: '',
    verbosity: '',
    timeout_s: '',
    name: '',
    run_if: 'success',
  };
}

type StoredSpec = Partial<SubmitRunBody> & { name?: string; run_if?: RunIf };

/** A stored spec (a template's, a schedule's target, a step) as a draft. */
export function runDraftFrom(spec: StoredSpec, fallbackMode: InventoryMode = 'stored'): RunDraft {
  const num = (n: number | undefined) => (n === undefined ? '' : String(n));
  return {
    source: spec.project_id ? 'project' : 'inline',
    playbook: spec.playbook ?? '',
    project_id: spec.project_id ?? '',
    ref: spec.ref ?? '',
    inventoryMode: spec.inventory_id ? 'stored' : spec.inventory ? 'inline' : fallbackMode,
    inventory_id: spec.inventory_id ?? '',
    inventory: spec.inventory ?? '',
    credential_ids: spec.credential_ids ?? [],
    vars: varsText(spec.extra_vars),
    limit: spec.limit ?? '',
    check: spec.check ?? false,
    shards: num(spec.shards),
    labels: (spec.labels ?? []).join(', '),
    forks: num(spec.forks),
    verbosity: num(spec.verbosity),
    timeout_s: num(spec.timeout_s),
    name: spec.name ?? '',
    run_if: spec.run_if ?? 'success',
  };
}

/** Problems found in the browser, by the field's path under the draft's prefix (e.g. `extra_vars`). */
export type LocalErrors = Record<string, string[]>;

/**
 * The draft as a request body. Numbers that are not numbers go as typed so the server names the field; vars
 * that do not parse are a local error at `extra_vars`.
 */
export function runSpecFrom(d: RunDraft, opts: { step?: boolean } = {}): { spec: StoredSpec; errors: LocalErrors } {
  const errors: LocalErrors = {};
  const vars = parseVars(d.vars);
  if (!vars.ok) errors.extra_vars = [vars.error];
  const labels = parseWords(d.labels);
  const spec = compact({
    ...(opts.step ? { name: d.name.trim() || undefined, run_if: d.run_if === 'success' ? undefined : d.run_if } : {}),
    playbook: d.playbook,
    project_id: d.source === 'project' ? d.project_id || undefined : undefined,
    ref: d.source === 'project' ? d.ref.trim() || undefined : undefined,
    inventory_id: d.inventoryMode === 'stored' ? d.inventory_id || undefined : undefined,
    inventory: d.inventoryMode === 'inline' ? d.inventory || undefined : undefined,
    credential_ids: d.credential_ids.length ? d.credential_ids : undefined,
    extra_vars: vars.ok ? vars.vars : undefined,
    limit: d.limit.trim() || undefined,
    check: d.check || undefined,
    shards: optionalNumber(d.shards),
    labels: labels.length ? labels : undefined,
    forks: optionalNumber(d.forks),
    verbosity: optionalNumber(d.verbosity),
    timeout_s: optionalNumber(d.timeout_s),
  }) as StoredSpec;
  return { spec, errors };
}
