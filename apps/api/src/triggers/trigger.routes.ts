import { UnauthenticatedError } from '@baton/core';
import {
  HookReply,
  ListQuery,
  Trigger,
  TriggerCreateBody,
  TriggerIdParams,
  TriggerUpdateBody,
  TriggerWithSecret,
} from '@baton/contracts';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { HttpError } from '../http/problem.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

const location = (id: string) => ({ Location: `/v1/triggers/${id}` });

/** Any text: an unknown token is a 404 like a deleted one, never a 400 that tells what tokens look like. */
const HookParams = z.strictObject({ token: z.string().meta({ description: 'the trigger’s token' }) });

export function triggerRoutes(s: Pick<Services, 'triggers'>): Operation[] {
  return [
    defineOperation({
      operationId: 'createTrigger',
      method: 'post',
      path: '/triggers',
      tag: 'triggers',
      auth: 'user',
      legacy: true,
      summary:
        'Create a webhook trigger (operators and admins): a push to the target’s repository launches the target, as the trigger’s creator, of the pushed commit. The answer carries the hook URL and the signing secret, shown only now.',
      body: TriggerCreateBody,
      responses: {
        201: { description: 'Created; `secret` is never shown again', schema: TriggerWithSecret },
        422: { description: 'the target cannot be launched (a playbook missing at the branch head, git refused…)' },
      },
      async handle({ principal, body }) {
        const trigger = await s.triggers.create(principal, body);
        return { status: 201, body: trigger, headers: location(trigger.id) };
      },
    }),
    defineOperation({
      operationId: 'listTriggers',
      method: 'get',
      path: '/triggers',
      tag: 'triggers',
      auth: 'user',
      legacy: true,
      summary: 'List the webhook triggers the caller may see (never their secrets).',
      query: ListQuery,
      responses: { 200: { description: 'Triggers, newest first', schema: z.array(Trigger) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.triggers.list(principal, query));
      },
    }),
    defineOperation({
      operationId: 'getTrigger',
      method: 'get',
      path: '/triggers/{id}',
      tag: 'triggers',
      auth: 'user',
      legacy: true,
      summary: 'One webhook trigger; `hook_url` only for those who manage it, the secret never.',
      params: TriggerIdParams,
      responses: { 200: { description: 'The trigger', schema: Trigger } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.triggers.get(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'updateTrigger',
      method: 'put',
      path: '/triggers/{id}',
      tag: 'triggers',
      auth: 'user',
      legacy: true,
      summary:
        'Rename, retarget, change the filters or toggle signature enforcement (needs manage). A new target is checked as a submission would be, for the caller and for the trigger’s owner.',
      params: TriggerIdParams,
      body: TriggerUpdateBody,
      responses: {
        200: { description: 'The updated trigger', schema: Trigger },
        422: { description: 'the new target cannot be launched' },
      },
      async handle({ principal, params, body }) {
        return { status: 200, body: await s.triggers.update(principal, params.id, body) };
      },
    }),
    defineOperation({
      operationId: 'deleteTrigger',
      method: 'delete',
      path: '/triggers/{id}',
      tag: 'triggers',
      auth: 'user',
      legacy: true,
      summary: 'Delete a trigger (needs manage); its hook URL answers 404 from then on.',
      params: TriggerIdParams,
      responses: { 204: { description: 'Deleted' } },
      async handle({ principal, params }) {
        await s.triggers.remove(principal, params.id);
        return { status: 204 };
      },
    }),
    defineOperation({
      operationId: 'rotateTriggerSecret',
      method: 'post',
      path: '/triggers/{id}/rotate-secret',
      tag: 'triggers',
      auth: 'user',
      legacy: true,
      summary:
        'A new signing secret, shown once (needs manage); the old one is refused from now on. The hook URL stays the same.',
      params: TriggerIdParams,
      responses: { 200: { description: 'The trigger with its new secret', schema: TriggerWithSecret } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.triggers.rotateSecret(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'fireHook',
      method: 'post',
      path: '/hooks/{token}',
      unversioned: true,
      tag: 'triggers',
      auth: 'public',
      summary: 'A forge’s push delivery: fires the trigger whose token is in the path.',
      description:
        'The body is the forge’s push payload (GitHub, Gitea or GitLab; JSON, or form-encoded with a `payload` field), at most 5 MiB. A trigger that requires a signature checks it first, over the raw body, in constant time: `X-Gitea-Signature` (hex HMAC-SHA256), `X-Baton-Signature-256` or `X-Hub-Signature-256` (`sha256=<hex>`), or `X-Gitlab-Token` (the secret). The event comes from `X-GitHub-Event`, `X-Gitea-Event` or `X-Gitlab-Event` (none: a push); the delivery id from `X-GitHub-Delivery`, `X-Gitea-Delivery`, `X-Gitlab-Event-UUID` or `X-Baton-Delivery` fires once. An accepted push launches the trigger’s target, as its creator, of the pushed commit.',
      params: HookParams,
      responses: {
        202: { description: 'Accepted: fired (`run_id`), or not and why (`reason`)', schema: HookReply },
        400: { description: 'the body is not JSON, or not a push payload' },
        401: { description: 'the signature is missing or wrong; nothing fired (audited)' },
        404: { description: 'no trigger has this token' },
        409: { description: 'the trigger cannot launch (its owner is gone)' },
        413: { description: 'the body is over 5 MiB' },
        422: { description: 'the push is to another repository, or the target cannot be launched' },
      },
      async handle({ params, req }) {
        const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        try {
          return { status: 202, body: await s.triggers.deliver(params.token, { headers: req.headers, body }) };
        } catch (err) {
          // Not a bearer challenge: the forge signs deliveries with the trigger's secret.
          if (err instanceof UnauthenticatedError) throw new HttpError(401, 'bad-signature', err.message);
          throw err;
        }
      },
    }),
  ];
}
