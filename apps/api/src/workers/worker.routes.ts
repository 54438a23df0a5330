import { Worker } from '@baton/contracts';
import { z } from 'zod';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

export function workerRoutes(s: Pick<Services, 'workers'>): Operation[] {
  return [
    defineOperation({
      operationId: 'listWorkers',
      method: 'get',
      path: '/workers',
      tag: 'workers',
      auth: 'user',
      legacy: true,
      summary:
        'The executors by name: capacity, runs they hold (the ids of those the caller may see, admins all; running_count counts every one), last heartbeat, lease expiry and freshness (fresh ≤ 15 s since the last heartbeat, stale ≤ 30 s, then dead).',
      responses: { 200: { description: 'Workers', schema: z.array(Worker) } },
      async handle({ principal }) {
        return { status: 200, body: await s.workers.list(principal) };
      },
    }),
  ];
}
