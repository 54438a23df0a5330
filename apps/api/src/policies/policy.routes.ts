import { ListQuery, Policy, PolicyCreateBody, PolicyIdParams, PolicyUpdateBody } from '@baton/contracts';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

const UNKNOWN_REFERENCE = {
  description: 'a project, template, inventory, user or team the policy names does not exist (each at its field)',
};

export function policyRoutes(s: Pick<Services, 'policies'>): Operation[] {
  return [
    defineOperation({
      operationId: 'createPolicy',
      method: 'post',
      path: '/policies',
      tag: 'policies',
      auth: 'user',
      legacy: true,
      summary: 'Create an approval policy (admins): enabled policies hold every run they match until it is approved.',
      description:
        'Every given `match` field must hold for a run to be held (a list holds when any of its items does; an empty match holds for every run). `approvers` names who may decide, besides admins; a held run is released when each policy that holds it has `min_approvals` approvals, and finishes `rejected` on one reject or when the earliest `expires_after_s` of its holding policies has passed.',
      body: PolicyCreateBody,
      responses: {
        201: { description: 'Created', schema: Policy },
        409: { description: 'a policy of this name exists' },
        422: UNKNOWN_REFERENCE,
      },
      async handle({ principal, body }) {
        const policy = await s.policies.create(principal, body);
        return { status: 201, body: policy, headers: { Location: `/v1/policies/${policy.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listPolicies',
      method: 'get',
      path: '/policies',
      tag: 'policies',
      auth: 'user',
      legacy: true,
      summary: 'List approval policies, newest first (operators and admins).',
      query: ListQuery,
      responses: { 200: { description: 'Policies, newest first', schema: z.array(Policy) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.policies.list(principal, query));
      },
    }),
    defineOperation({
      operationId: 'getPolicy',
      method: 'get',
      path: '/policies/{id}',
      tag: 'policies',
      auth: 'user',
      legacy: true,
      summary: 'One approval policy (operators and admins).',
      params: PolicyIdParams,
      responses: { 200: { description: 'The policy', schema: Policy } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.policies.get(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'updatePolicy',
      method: 'put',
      path: '/policies/{id}',
      tag: 'policies',
      auth: 'user',
      legacy: true,
      summary:
        'Change an approval policy (admins): each given field replaces the stored one; `description` or `expires_after_s` null removes it.',
      description:
        'Applies to runs submitted from now on. Runs the policy already holds keep it as it was when they were held.',
      params: PolicyIdParams,
      body: PolicyUpdateBody,
      responses: {
        200: { description: 'The updated policy', schema: Policy },
        409: { description: 'another policy has the new name' },
        422: UNKNOWN_REFERENCE,
      },
      async handle({ principal, params, body }) {
        return { status: 200, body: await s.policies.update(principal, params.id, body) };
      },
    }),
    defineOperation({
      operationId: 'deletePolicy',
      method: 'delete',
      path: '/policies/{id}',
      tag: 'policies',
      auth: 'user',
      legacy: true,
      summary: 'Delete an approval policy (admins). Runs it holds stay held until decided or expired.',
      params: PolicyIdParams,
      responses: { 204: { description: 'Deleted' } },
      async handle({ principal, params }) {
        await s.policies.remove(principal, params.id);
        return { status: 204 };
      },
    }),
  ];
}
