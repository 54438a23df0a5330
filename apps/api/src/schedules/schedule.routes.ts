import {
  ListQuery,
  Schedule,
  ScheduleCreateBody,
  ScheduleIdParams,
  SchedulePreview,
  SchedulePreviewBody,
  ScheduleUpdateBody,
} from '@baton/contracts';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

const TARGET_REFUSED = {
  description:
    'the target cannot be submitted as it stands (git cannot resolve the project or ref, the playbook is missing…); `errors` point into `body.target`',
};

export function scheduleRoutes(s: Pick<Services, 'schedules'>): Operation[] {
  return [
    defineOperation({
      operationId: 'createSchedule',
      method: 'post',
      path: '/schedules',
      tag: 'schedules',
      auth: 'user',
      legacy: true,
      summary:
        'Create a cron schedule for a run, split, pipeline or template (operators and admins). The caller needs use on everything the target names; its runs are submitted as the caller (the owner).',
      body: ScheduleCreateBody,
      responses: { 201: { description: 'Created', schema: Schedule }, 422: TARGET_REFUSED },
      async handle({ principal, body }) {
        const schedule = await s.schedules.create(principal, body);
        return { status: 201, body: schedule, headers: { Location: `/v1/schedules/${schedule.id}` } };
      },
    }),
    defineOperation({
      operationId: 'previewSchedule',
      method: 'post',
      path: '/schedules/preview',
      tag: 'schedules',
      auth: 'user',
      // Reads nothing stored and changes nothing: read-scoped tokens may ask.
      allowReadScope: true,
      summary:
        'When a cron expression would fire from now in a time zone: the next five due times, in UTC and local, as the scheduler reaches them. Saves nothing; a bad expression or zone is a 400 at its field.',
      body: SchedulePreviewBody,
      responses: { 200: { description: 'The next due times', schema: SchedulePreview } },
      async handle({ body }) {
        return { status: 200, body: s.schedules.preview(body) };
      },
    }),
    defineOperation({
      operationId: 'listSchedules',
      method: 'get',
      path: '/schedules',
      tag: 'schedules',
      auth: 'user',
      legacy: true,
      summary: 'List the schedules the caller may see.',
      query: ListQuery,
      responses: { 200: { description: 'Schedules, newest first', schema: z.array(Schedule) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.schedules.list(principal, query));
      },
    }),
    defineOperation({
      operationId: 'getSchedule',
      method: 'get',
      path: '/schedules/{id}',
      tag: 'schedules',
      auth: 'user',
      legacy: true,
      summary: 'One schedule, with its next due time (UTC and local) and the outcome of its last fire.',
      params: ScheduleIdParams,
      responses: { 200: { description: 'The schedule', schema: Schedule } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.schedules.get(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'updateSchedule',
      method: 'put',
      path: '/schedules/{id}',
      tag: 'schedules',
      auth: 'user',
      legacy: true,
      summary:
        'Update a schedule (needs manage; give any of its fields). A new cron, zone or enabling recomputes the next due time from now; a new target is checked as the caller would submit it.',
      params: ScheduleIdParams,
      body: ScheduleUpdateBody,
      responses: { 200: { description: 'The updated schedule', schema: Schedule }, 422: TARGET_REFUSED },
      async handle({ principal, params, body }) {
        return { status: 200, body: await s.schedules.update(principal, params.id, body) };
      },
    }),
    defineOperation({
      operationId: 'deleteSchedule',
      method: 'delete',
      path: '/schedules/{id}',
      tag: 'schedules',
      auth: 'user',
      legacy: true,
      summary: 'Delete a schedule and the grants on it (needs manage). Runs it started stay.',
      params: ScheduleIdParams,
      responses: { 204: { description: 'Deleted' } },
      async handle({ principal, params }) {
        await s.schedules.remove(principal, params.id);
        return { status: 204 };
      },
    }),
  ];
}
