import {
  ListQuery,
  Project,
  ProjectCreateBody,
  ProjectIdParams,
  ProjectSyncResult,
  ProjectUpdateBody,
} from '@baton/contracts';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

const GIT_REFUSED = {
  description:
    'git could not resolve the branch (unreachable repository, unknown branch, rejected credential); `detail` carries git’s reason',
};

export function projectRoutes(s: Pick<Services, 'projects'>): Operation[] {
  return [
    defineOperation({
      operationId: 'createProject',
      method: 'post',
      path: '/projects',
      tag: 'projects',
      auth: 'user',
      legacy: true,
      summary:
        'Register a git project (operators and admins); resolves the branch head with git and records it as last_commit.',
      body: ProjectCreateBody,
      responses: { 201: { description: 'Created', schema: Project }, 422: GIT_REFUSED },
      async handle({ principal, body }) {
        const project = await s.projects.create(principal, body);
        return { status: 201, body: project, headers: { Location: `/v1/projects/${project.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listProjects',
      method: 'get',
      path: '/projects',
      tag: 'projects',
      auth: 'user',
      legacy: true,
      summary: 'List the projects the caller may see.',
      query: ListQuery,
      responses: { 200: { description: 'Projects, newest first', schema: z.array(Project) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.projects.list(principal, query));
      },
    }),
    defineOperation({
      operationId: 'getProject',
      method: 'get',
      path: '/projects/{id}',
      tag: 'projects',
      auth: 'user',
      legacy: true,
      summary: 'One project.',
      params: ProjectIdParams,
      responses: { 200: { description: 'The project', schema: Project } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.projects.get(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'updateProject',
      method: 'put',
      path: '/projects/{id}',
      tag: 'projects',
      auth: 'user',
      legacy: true,
      summary: 'Update a project (needs manage); a new URL, branch or credential is resolved again with git.',
      params: ProjectIdParams,
      body: ProjectUpdateBody,
      responses: { 200: { description: 'The updated project', schema: Project }, 422: GIT_REFUSED },
      async handle({ principal, params, body }) {
        return { status: 200, body: await s.projects.update(principal, params.id, body) };
      },
    }),
    defineOperation({
      operationId: 'deleteProject',
      method: 'delete',
      path: '/projects/{id}',
      tag: 'projects',
      auth: 'user',
      legacy: true,
      summary:
        'Delete a project and the grants on it (needs manage); 409 while a template or an inventory source uses it.',
      params: ProjectIdParams,
      responses: { 204: { description: 'Deleted' } },
      async handle({ principal, params }) {
        await s.projects.remove(principal, params.id);
        return { status: 204 };
      },
    }),
    defineOperation({
      operationId: 'syncProject',
      method: 'post',
      path: '/projects/{id}/sync',
      tag: 'projects',
      auth: 'user',
      legacy: true,
      summary: 'Resolve the branch head again and record it as last_commit (needs use on the project).',
      params: ProjectIdParams,
      responses: {
        200: {
          description: 'The synced project and the Galaxy requirements at its new commit',
          schema: ProjectSyncResult,
        },
        422: GIT_REFUSED,
      },
      async handle({ principal, params }) {
        return { status: 200, body: await s.projects.sync(principal, params.id) };
      },
    }),
  ];
}
