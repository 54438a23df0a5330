import { describe, expect, it } from '@jest/globals';
import { type ChainEdge, type ChainNode, chainSteps } from './import-chain.js';

const task = (id: string): ChainNode<string> => ({ id, approval: false, value: id });
const approval = (id: string): ChainNode<string> => ({ id, approval: true, value: id });
const e = (from: string, to: string, condition: ChainEdge['condition'] = 'success'): ChainEdge => ({
  from,
  to,
  condition,
});

describe('chainSteps', () => {
  it('orders a chain, keeps always and failure edges as run_if, and lifts approvals out', () => {
    const r = chainSteps(
      [task('deploy'), approval('ok?'), task('build'), task('smoke'), task('rollback')],
      [e('build', 'ok?'), e('ok?', 'deploy'), e('deploy', 'smoke', 'always'), e('deploy', 'rollback', 'failure')],
    );
    expect(r).toEqual({
      ok: true,
      steps: [
        { value: 'build', run_if: 'success' },
        { value: 'deploy', run_if: 'success' },
        { value: 'smoke', run_if: 'always' },
        { value: 'rollback', run_if: 'failure' },
      ],
      approvals: ['ok?'],
    });
  });

  it.each([
    ['branches', [task('a'), task('b'), task('c')], [e('a', 'b'), e('a', 'c')], 'branches'],
    ['joins', [task('a'), task('b'), task('c')], [e('a', 'c'), e('b', 'c')], 'start nodes'],
    ['a cycle', [task('a'), task('b')], [e('a', 'b'), e('b', 'a')], 'cycle'],
    [
      'a cycle below the start',
      [task('s'), task('a'), task('b')],
      [e('s', 'a'), e('a', 'b'), e('b', 'a')],
      'several parents',
    ],
    [
      'a failure path that goes on',
      [task('a'), task('f'), task('g')],
      [e('a', 'f', 'failure'), e('f', 'g')],
      'goes on',
    ],
    ['an edge to nowhere', [task('a')], [e('a', 'zzz')], 'missing node'],
    ['a node twice', [task('a'), task('a')], [], 'twice'],
    ['nothing', [], [], 'no nodes'],
    ['only approvals', [approval('x')], [], 'no steps'],
    ['unreachable nodes', [task('a'), task('b'), task('c')], [e('b', 'c'), e('c', 'b')], 'not reachable'],
  ])('refuses %s', (_what, nodes, edges, reason) => {
    const r = chainSteps(nodes as Array<ChainNode<string>>, edges as ChainEdge[]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(reason);
  });
});
