// What the AI helpers use, as Prometheus metrics: tokens in and out per endpoint and user, and calls per outcome.
// Counted by each API replica as calls finish; Prometheus sums over the instances.
import type { AiUsage } from '@baton/core';
import client from 'prom-client';

const ENDPOINTS = ['explain', 'draft', 'ask', 'propose'] as const;

export interface AiMetrics {
  readonly metrics: readonly client.Metric[];
  onUsage(usage: AiUsage): void;
}

export function createAiMetrics(): AiMetrics {
  const tokens = new client.Counter({
    name: 'baton_ai_tokens_total',
    help: 'Tokens the AI provider counted, by endpoint (explain, draft, ask, propose), user id and direction (in, out)',
    labelNames: ['endpoint', 'user', 'direction'],
    registers: [],
  });
  const calls = new client.Counter({
    name: 'baton_ai_requests_total',
    help: 'Calls to the AI provider, by endpoint and outcome (ok, error: the provider failed, timed out or answered garbage)',
    labelNames: ['endpoint', 'outcome'],
    registers: [],
  });
  // Every endpoint's series from the start, so a rate over them sees the first call.
  for (const endpoint of ENDPOINTS) for (const outcome of ['ok', 'error']) calls.inc({ endpoint, outcome }, 0);
  return {
    metrics: [tokens, calls],
    onUsage(u) {
      calls.inc({ endpoint: u.purpose, outcome: u.ok ? 'ok' : 'error' });
      if (u.inputTokens > 0) tokens.inc({ endpoint: u.purpose, user: u.userId, direction: 'in' }, u.inputTokens);
      if (u.outputTokens > 0) tokens.inc({ endpoint: u.purpose, user: u.userId, direction: 'out' }, u.outputTokens);
    },
  };
}
