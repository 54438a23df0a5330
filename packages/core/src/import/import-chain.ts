// Workflows (AWX workflow job templates, Semaphore workflows) as Baton pipelines: a pipeline is a sequence of steps
// with run_if, so only a workflow that is one chain maps: one root, each node followed by at most one success or
// always node, failure edges ending in leaf nodes (they become `run_if: failure` steps after the chain). Approval
// nodes leave the chain: the pipeline's template gets an approval policy instead (the whole run waits before it starts).
import type { RunIf } from '@baton/contracts';

export type EdgeCondition = 'success' | 'failure' | 'always';

export interface ChainNode<T> {
  id: string;
  approval: boolean;
  value: T;
}
export interface ChainEdge {
  from: string;
  to: string;
  condition: EdgeCondition;
}
export interface ChainStep<T> {
  value: T;
  run_if: RunIf;
}
export type ChainResult<T> = { ok: true; steps: Array<ChainStep<T>>; approvals: T[] } | { ok: false; reason: string };

/** The workflow as a chain of steps, or why it is not one. Never throws. */
export function chainSteps<T>(nodes: ReadonlyArray<ChainNode<T>>, edges: ReadonlyArray<ChainEdge>): ChainResult<T> {
  if (nodes.length === 0) return { ok: false, reason: 'it has no nodes' };
  const byId = new Map<string, ChainNode<T>>();
  for (const n of nodes) {
    if (byId.has(n.id)) return { ok: false, reason: `node ${n.id} appears twice` };
    byId.set(n.id, n);
  }
  const out = new Map<string, ChainEdge[]>();
  const parents = new Map<string, number>();
  for (const e of edges) {
    if (!byId.has(e.from) || !byId.has(e.to))
      return { ok: false, reason: `an edge names a missing node (${e.from} → ${e.to})` };
    out.set(e.from, [...(out.get(e.from) ?? []), e]);
    parents.set(e.to, (parents.get(e.to) ?? 0) + 1);
  }
  const roots = nodes.filter((n) => !parents.has(n.id));
  if (roots.length !== 1)
    return {
      ok: false,
      reason: roots.length ? `it has ${roots.length} start nodes, not one` : 'its edges form a cycle',
    };
  const joins = [...parents].filter(([, count]) => count > 1).map(([id]) => id);
  if (joins.length) return { ok: false, reason: `node ${joins[0]} has several parents (branches join)` };

  const steps: Array<ChainStep<T>> = [];
  const onFailure: Array<ChainStep<T>> = [];
  const approvals: T[] = [];
  const seen = new Set<string>();
  let current: ChainNode<T> | undefined = roots[0];
  let runIf: RunIf = 'success';
  while (current) {
    if (seen.has(current.id)) return { ok: false, reason: 'its edges form a cycle' };
    seen.add(current.id);
    if (current.approval) approvals.push(current.value);
    else steps.push({ value: current.value, run_if: runIf });
    const edgesOut: ChainEdge[] = out.get(current.id) ?? [];
    for (const e of edgesOut.filter((x) => x.condition === 'failure')) {
      const target = byId.get(e.to)!;
      if ((out.get(e.to) ?? []).length)
        return { ok: false, reason: `the failure path from ${current.id} goes on past ${e.to}` };
      if (target.approval) return { ok: false, reason: `an approval (${e.to}) follows a failure` };
      seen.add(e.to);
      onFailure.push({ value: target.value, run_if: 'failure' });
    }
    const next = edgesOut.filter((x) => x.condition !== 'failure');
    if (next.length > 1) return { ok: false, reason: `node ${current.id} branches into ${next.length} paths` };
    const edge: ChainEdge | undefined = next[0];
    // After an approval the next step runs as the approval's own edge says; `always` survives a failed step before.
    if (edge && !current.approval) runIf = edge.condition === 'always' ? 'always' : 'success';
    else if (edge && edge.condition === 'always') runIf = 'always';
    current = edge ? byId.get(edge.to) : undefined;
  }
  if (seen.size !== nodes.length) return { ok: false, reason: 'some nodes are not reachable from its start' };
  if (!steps.length && !onFailure.length) return { ok: false, reason: 'it has no steps that run anything' };
  return { ok: true, steps: [...steps, ...onFailure], approvals };
}
