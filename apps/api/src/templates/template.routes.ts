import {
  LaunchTemplateBody,
  ListQuery,
  Run,
  Template,
  TemplateCreateBody,
  TemplateIdParams,
  TemplateUpdateBody,
} from '@baton/contracts';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

const SPEC_REFUSED = {
  description:
    'the spec names a playbook, ref or repository git cannot resolve, or an inventory ansible no longer reads; `errors` point into the spec',
};

export function templateRoutes(s: Pick<Services, 'templates'>): Operation[] {
  return [
    defineOperation({
      operationId: 'createTemplate',
      method: 'post',
      path: '/templates',
      tag: 'templates',
      auth: 'user',
      legacy: true,
      summary:
        'Save a launch preset (operators and admins): a run or pipeline spec, checked as a submission would be (errors at body.spec.…) without running, an optional survey and the fields a launcher may override.',
      body: TemplateCreateBody,
      responses: { 201: { description: 'Created', schema: Template }, 422: SPEC_REFUSED },
      async handle({ principal, body }) {
        const template = await s.templates.create(principal, body);
        return { status: 201, body: template, headers: { Location: `/v1/templates/${template.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listTemplates',
      method: 'get',
      path: '/templates',
      tag: 'templates',
      auth: 'user',
      legacy: true,
      summary: 'List the templates the caller may see.',
      query: ListQuery,
      responses: { 200: { description: 'Templates, newest first', schema: z.array(Template) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.templates.list(principal, query));
      },
    }),
    defineOperation({
      operationId: 'getTemplate',
      method: 'get',
      path: '/templates/{id}',
      tag: 'templates',
      auth: 'user',
      legacy: true,
      summary: 'One template (password defaults show as "$encrypted$").',
      params: TemplateIdParams,
      responses: { 200: { description: 'The template', schema: Template } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.templates.get(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'updateTemplate',
      method: 'put',
      path: '/templates/{id}',
      tag: 'templates',
      auth: 'user',
      legacy: true,
      summary:
        'Update a template (needs manage); a new spec is checked again as a submission would be. A password default sent as "$encrypted$" keeps the stored one.',
      params: TemplateIdParams,
      body: TemplateUpdateBody,
      responses: { 200: { description: 'The updated template', schema: Template }, 422: SPEC_REFUSED },
      async handle({ principal, params, body }) {
        return { status: 200, body: await s.templates.update(principal, params.id, body) };
      },
    }),
    defineOperation({
      operationId: 'deleteTemplate',
      method: 'delete',
      path: '/templates/{id}',
      tag: 'templates',
      auth: 'user',
      legacy: true,
      summary:
        'Delete a template and the grants on it (needs manage); 409 naming the schedules and triggers that launch it.',
      params: TemplateIdParams,
      responses: { 204: { description: 'Deleted' } },
      async handle({ principal, params }) {
        await s.templates.remove(principal, params.id);
        return { status: 204 };
      },
    }),
    defineOperation({
      operationId: 'launchTemplate',
      method: 'post',
      path: '/templates/{id}/launch',
      tag: 'templates',
      auth: 'user',
      legacy: true,
      summary:
        'Launch a template (needs use on it and a role that may create): its objects are used on the owner’s authority. Survey answers are checked (one error per bad answer at body.survey_answers.<variable>); overrides only of allowed fields. 409 when the owner no longer exists.',
      params: TemplateIdParams,
      body: LaunchTemplateBody.optional(),
      responses: {
        201: { description: 'The run (a split, or a pipeline for a pipeline template)', schema: Run },
        422: SPEC_REFUSED,
      },
      async handle({ principal, params, body }) {
        const run = await s.templates.launch(principal, params.id, body ?? {}, { origin: 'template' });
        return { status: 201, body: run, headers: { Location: `/v1/runs/${run.id}` } };
      },
    }),
  ];
}
