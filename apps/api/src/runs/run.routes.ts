import { Run, type RunDecision, RunDecisionBody, RunIdParams, RunListQuery, SubmitRunBody } from '@baton/contracts';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

const location = (id: string) => ({ Location: `/v1/runs/${id}` });

export function runRoutes(s: Pick<Services, 'runs'>): Operation[] {
  return [
    defineOperation({
      operationId: 'submitRun',
      method: 'post',
      path: '/runs',
      tag: 'runs',
      auth: 'user',
      legacy: true,
      summary:
        'Submit a run: an inline playbook or a path in a project (resolved to the branch head now), against a stored or inline inventory. shards ≥ 2 splits it.',
      description:
        'Needs the operator or admin role and use on every referenced object. With shards: N, answers with the split; its N shard runs get hosts [k::N] of the inventory sorted by name, after limit.',
      body: SubmitRunBody,
      responses: {
        201: { description: 'Submitted: the run, or the split', schema: Run },
        400: {
          description:
            'Invalid body: both or neither inventory, a `..` path, unparseable inline inventory, more shards than hosts…',
        },
        403: { description: 'Viewer role, or no use grant on a referenced object' },
        404: { description: 'A referenced project, inventory or credential is unknown or not visible' },
        422: {
          description: 'git cannot fetch the project, or the playbook is missing or a directory at the branch head',
        },
      },
      async handle({ principal, body }) {
        const run = await s.runs.submit(principal, body);
        return { status: 201, body: run, headers: location(run.id) };
      },
    }),
    defineOperation({
      operationId: 'listRuns',
      method: 'get',
      path: '/runs',
      tag: 'runs',
      auth: 'user',
      legacy: true,
      summary: 'Run history the caller may see, newest first; shards only with include_shards=true.',
      query: RunListQuery,
      responses: { 200: { description: 'Runs', schema: z.array(Run) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.runs.list(principal, query));
      },
    }),
    defineOperation({
      operationId: 'getRun',
      method: 'get',
      path: '/runs/{id}',
      tag: 'runs',
      auth: 'user',
      legacy: true,
      summary: 'One run with its per-host counts.',
      params: RunIdParams,
      responses: { 200: { description: 'The run', schema: Run } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.runs.get(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'listRunShards',
      method: 'get',
      path: '/runs/{id}/shards',
      tag: 'runs',
      auth: 'user',
      legacy: true,
      summary: 'The shard runs of a split, in shard order (empty for any other run).',
      params: RunIdParams,
      responses: { 200: { description: 'Shards', schema: z.array(Run) } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.runs.shards(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'listRunSteps',
      method: 'get',
      path: '/runs/{id}/steps',
      tag: 'runs',
      auth: 'user',
      legacy: true,
      summary: 'The step runs of a pipeline run (empty until pipelines exist).',
      params: RunIdParams,
      responses: { 200: { description: 'Steps', schema: z.array(Run) } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.runs.steps(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'cancelRun',
      method: 'post',
      path: '/runs/{id}/cancel',
      tag: 'runs',
      auth: 'user',
      legacy: true,
      summary:
        'Cancel a run: pending or held → finished/canceled at once (200); running → the executor stops ansible-playbook (202). A split cancels its shards.',
      params: RunIdParams,
      responses: {
        200: { description: 'Canceled: the finished run', schema: Run },
        202: {
          description: 'Stopping: the run finishes `canceled` once its executor has stopped ansible-playbook',
          schema: Run,
        },
        409: { description: 'The run is already finished' },
      },
      async handle({ principal, params }) {
        const { run, accepted } = await s.runs.cancel(principal, params.id);
        return { status: accepted ? 202 : 200, body: run };
      },
    }),
    defineOperation({
      operationId: 'retryRun',
      method: 'post',
      path: '/runs/{id}/retry',
      tag: 'runs',
      auth: 'user',
      legacy: true,
      summary:
        'Retry a finished run: a split → a new split of only its failed shards; an ordinary run → again, on its failed and unreachable hosts.',
      params: RunIdParams,
      responses: {
        201: { description: 'The new run or split, with retry_of set', schema: Run },
        409: { description: 'Not finished, or nothing failed' },
      },
      async handle({ principal, params }) {
        const run = await s.runs.retry(principal, params.id);
        return { status: 201, body: run, headers: location(run.id) };
      },
    }),
    decisionOperation(s, 'approve', {
      summary:
        'Approve a run held for approval: once every holding policy has its min_approvals, it moves held → pending and is queued (a split with its shards, a pipeline with its first step).',
      more: ' An admin’s approval counts toward every holding policy, anyone else’s toward each policy naming them.',
      answer: 'The run: still held (more approvals needed) or pending (released)',
    }),
    decisionOperation(s, 'reject', {
      summary: 'Reject a run held for approval: one reject finishes it `rejected` (with its shards or steps).',
      more: '',
      answer: 'The run, finished `rejected`',
    }),
  ];
}

/** POST /runs/{id}/approve and /reject: the same rules, one decision each. */
function decisionOperation(
  s: Pick<Services, 'runs'>,
  decision: RunDecision,
  words: { summary: string; more: string; answer: string },
): Operation {
  return defineOperation({
    operationId: `${decision}Run`,
    method: 'post',
    path: `/runs/{id}/${decision}`,
    tag: 'runs',
    auth: 'user',
    legacy: true,
    summary: words.summary,
    description: `Only an approver a holding policy names (as a user, by role or through a team) or an admin may decide; the run’s submitter (for a scheduled or triggered run, the schedule’s or trigger’s owner) can never approve it, admins included. One person decides once. The decision is recorded in \`approvals\`, audited, and emitted as a \`status\` event on the run’s stream.${words.more}`,
    params: RunIdParams,
    body: RunDecisionBody.optional(),
    responses: {
      200: { description: words.answer, schema: Run },
      403: { description: 'Not an approver of a holding policy, or the submitter approving their own run' },
      409: {
        description: 'The run is not held (or is a shard or step: decide on its parent), or the caller already decided',
      },
    },
    async handle({ principal, params, body }) {
      return { status: 200, body: await s.runs.decide(principal, params.id, decision, body?.comment) };
    },
  });
}
