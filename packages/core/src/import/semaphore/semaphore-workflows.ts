// Semaphore workflows (newest editions) → Baton pipeline templates, when the graph is one chain (chainSteps). Each
// step is a copy of its node's template spec; approval nodes become one approval policy on the pipeline template,
// which holds the whole run before it starts.
import { MAX_PIPELINE_STEPS, MAX_POLICY_EXPIRY_S, MIN_POLICY_EXPIRY_S, type SemaphoreWorkflow } from '@baton/contracts';
import { chainSteps, type ChainEdge, type ChainNode, type EdgeCondition } from '../import-chain.js';
import type { PlannedPolicy, PlannedTemplate } from '../import-plan.js';
import { batonName, cut, planKey, skip, text, type MapContext } from './semaphore-context.js';
import type { TemplateRef } from './semaphore-templates.js';
import type { TemplateLookup } from './semaphore-triggers.js';

const CONDITIONS = new Map<string, EdgeCondition>([
  ['on_success', 'success'],
  ['on_failure', 'failure'],
  ['always', 'always'],
]);

interface NodeValue {
  id: string;
  template?: TemplateRef;
  timeout?: number;
  message?: string;
}

export function mapWorkflow(ctx: MapContext, w: SemaphoreWorkflow, template: TemplateLookup): void {
  const key = planKey(ctx, 'workflow', w.name);
  const refuse = (reason: string) => skip(ctx, 'workflow', w.name, reason, key);
  const where = `workflow "${w.name}"`;
  const nodes: Array<ChainNode<NodeValue>> = [];
  const overridden: string[] = [];
  for (const [i, n] of (w.nodes ?? []).entries()) {
    const id = n.id === null || n.id === undefined ? String(i + 1) : String(n.id);
    const kind = text(n.kind) ?? 'task';
    if (kind === 'approval') {
      const value: NodeValue = { id };
      if (typeof n.approval_timeout === 'number' && n.approval_timeout > 0) value.timeout = n.approval_timeout;
      const message = text(n.approval_message);
      if (message) value.message = message;
      nodes.push({ id, approval: true, value });
      continue;
    }
    if (kind !== 'task') return refuse(`node ${id} is of kind ${cut(kind, 50)}, which Baton has no step for`);
    const t = template(n.template);
    if (!t.ok) return refuse(`node ${id}: ${t.reason}`);
    if (n.inventory_id !== null && n.inventory_id !== undefined) overridden.push(`${id} (inventory)`);
    if (n.environment_id !== null && n.environment_id !== undefined) overridden.push(`${id} (environment)`);
    nodes.push({ id, approval: false, value: { id, template: t.value } });
  }
  const edges: ChainEdge[] = [];
  for (const e of w.edges ?? []) {
    const condition = CONDITIONS.get(e.condition ?? '');
    if (!condition) return refuse(`an edge has the condition ${cut(e.condition ?? '(none)', 50)}`);
    edges.push({ from: String(e.source_node_id), to: String(e.destination_node_id), condition });
  }
  const chain = chainSteps(nodes, edges);
  if (!chain.ok) return refuse(`it is not a chain of steps: ${chain.reason}`);
  if (chain.steps.length > MAX_PIPELINE_STEPS) return refuse(`it has more than ${MAX_PIPELINE_STEPS} steps`);
  if (overridden.length)
    ctx.warnings.push(
      `${where}: nodes ${overridden.join(', ')} override their template by source-server id: not imported`,
    );

  const steps = chain.steps.map((s) => ({ ...s.value.template!.spec, name: s.value.template!.name, run_if: s.run_if }));
  const name = batonName(ctx, 'template', w.name, 'workflow');
  const planned: PlannedTemplate = { kind: 'template', key, name, template_kind: 'pipeline', spec: { steps } };
  const description = text(w.description);
  if (description) planned.description = cut(description, 1000);
  ctx.objects.push(planned);

  if (!chain.approvals.length) return;
  const targets = new Set(edges.map((e) => e.to));
  const root = nodes.find((n) => !targets.has(n.id));
  if (chain.approvals.length > 1 || root?.approval !== true)
    ctx.warnings.push(`${where}: its approval holds the whole pipeline before it starts, not only the steps after it`);
  const timeouts = chain.approvals.flatMap((a) => (a.timeout === undefined ? [] : [a.timeout]));
  const policy: PlannedPolicy = {
    kind: 'policy',
    key: planKey(ctx, 'approval', w.name),
    name: batonName(ctx, 'policy', `${cut(w.name, 90)} approval`, 'approval'),
    templates: [key],
    approvers: { roles: ['admin'] },
  };
  const message = chain.approvals.flatMap((a) => (a.message ? [a.message] : [])).join('\n');
  if (message) policy.description = cut(message, 2000);
  if (timeouts.length)
    policy.expires_after_s = Math.min(
      MAX_POLICY_EXPIRY_S,
      Math.max(MIN_POLICY_EXPIRY_S, Math.round(Math.min(...timeouts))),
    );
  ctx.objects.push(policy);
}
