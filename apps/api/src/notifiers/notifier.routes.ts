import {
  Delivery,
  idOf,
  ListQuery,
  Notifier,
  NotifierCreateBody,
  NotifierIdParams,
  NotifierUpdateBody,
  NotifierWithSecret,
  PageLimit,
} from '@baton/contracts';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

const location = (id: string) => ({ Location: `/v1/notifiers/${id}` });
const NotifierListQuery = ListQuery.extend({
  template: idOf('tpl').optional().meta({ description: 'only the notifiers that fire for this template’s runs' }),
});
const DeliveriesQuery = z.strictObject({ limit: PageLimit });

export function notifierRoutes(s: Pick<Services, 'notifiers'>): Operation[] {
  return [
    defineOperation({
      operationId: 'createNotifier',
      method: 'post',
      path: '/notifiers',
      tag: 'notifiers',
      auth: 'user',
      summary:
        'Create a notifier (operators and admins): a webhook (signed), a Slack-compatible incoming webhook, or e-mail over SMTP, for the events it lists. A webhook’s signing secret is in this answer only.',
      description:
        'Deliveries are at least once, from an outbox written with the run’s own status change, retried with exponential backoff for up to 24 hours; each carries its delivery id as Idempotency-Key. A notifier hears only of runs its creator may see. Destinations: http(s) only, no credentials in URLs, no redirects followed, 10 s per attempt; private and loopback addresses only with BATON_NOTIFY_ALLOW_PRIVATE=true.',
      body: NotifierCreateBody,
      responses: {
        201: {
          description: 'Created (a webhook’s answer carries `secret`, shown only now)',
          schema: NotifierWithSecret.or(Notifier),
        },
      },
      async handle({ principal, body }) {
        const n = await s.notifiers.create(principal, body);
        return { status: 201, body: n, headers: location(n.id) };
      },
    }),
    defineOperation({
      operationId: 'listNotifiers',
      method: 'get',
      path: '/notifiers',
      tag: 'notifiers',
      auth: 'user',
      summary: 'List the notifiers the caller may see (never their secrets).',
      query: NotifierListQuery,
      responses: { 200: { description: 'Notifiers, newest first', schema: z.array(Notifier) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.notifiers.list(principal, query, { template: query.template }));
      },
    }),
    defineOperation({
      operationId: 'getNotifier',
      method: 'get',
      path: '/notifiers/{id}',
      tag: 'notifiers',
      auth: 'user',
      summary: 'One notifier (secrets by name only).',
      params: NotifierIdParams,
      responses: { 200: { description: 'The notifier', schema: Notifier } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.notifiers.get(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'updateNotifier',
      method: 'put',
      path: '/notifiers/{id}',
      tag: 'notifiers',
      auth: 'user',
      summary: 'Change a notifier (manage): config merges over the stored one, so a secret left out is kept.',
      params: NotifierIdParams,
      body: NotifierUpdateBody,
      responses: { 200: { description: 'The notifier', schema: Notifier } },
      async handle({ principal, params, body }) {
        return { status: 200, body: await s.notifiers.update(principal, params.id, body) };
      },
    }),
    defineOperation({
      operationId: 'deleteNotifier',
      method: 'delete',
      path: '/notifiers/{id}',
      tag: 'notifiers',
      auth: 'user',
      summary: 'Delete a notifier (manage); its pending deliveries are dropped, never sent.',
      params: NotifierIdParams,
      responses: { 204: { description: 'Deleted' } },
      async handle({ principal, params }) {
        await s.notifiers.remove(principal, params.id);
        return { status: 204 };
      },
    }),
    defineOperation({
      operationId: 'testNotifier',
      method: 'post',
      path: '/notifiers/{id}/test',
      tag: 'notifiers',
      auth: 'user',
      summary: 'Send a test message (manage), through the same delivery path; its attempts show in the delivery log.',
      params: NotifierIdParams,
      responses: { 202: { description: 'Queued', schema: z.object({ delivery: Delivery }) } },
      async handle({ principal, params }) {
        return { status: 202, body: { delivery: await s.notifiers.test(principal, params.id) } };
      },
    }),
    defineOperation({
      operationId: 'rotateNotifierSecret',
      method: 'post',
      path: '/notifiers/{id}/rotate-secret',
      tag: 'notifiers',
      auth: 'user',
      summary: 'A new signing secret for a webhook notifier (manage), shown only in this answer.',
      params: NotifierIdParams,
      responses: { 200: { description: 'The notifier with its new secret', schema: NotifierWithSecret } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.notifiers.rotateSecret(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'listNotifierDeliveries',
      method: 'get',
      path: '/notifiers/{id}/deliveries',
      tag: 'notifiers',
      auth: 'user',
      summary: 'Recent deliveries of a notifier, newest first: status, attempts, response code, error, next attempt.',
      params: NotifierIdParams,
      query: DeliveriesQuery,
      responses: { 200: { description: 'Deliveries', schema: z.array(Delivery) } },
      async handle({ principal, params, query }) {
        return { status: 200, body: await s.notifiers.deliveries(principal, params.id, query.limit) };
      },
    }),
  ];
}
