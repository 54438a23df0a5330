import {
  Credential,
  CredentialCreateBody,
  CredentialIdParams,
  CredentialUpdateBody,
  ListQuery,
} from '@baton/contracts';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

// No operation here ever answers a secret: the service's views carry only public inputs and secret field names.
export function credentialRoutes(s: Pick<Services, 'credentials'>): Operation[] {
  return [
    defineOperation({
      operationId: 'createCredential',
      method: 'post',
      path: '/credentials',
      tag: 'credentials',
      auth: 'user',
      legacy: true,
      summary:
        'Create a credential (operators and admins; the creator gets manage on it). Secrets are encrypted at rest and never returned.',
      body: CredentialCreateBody,
      responses: { 201: { description: 'Created', schema: Credential } },
      async handle({ principal, body }) {
        const credential = await s.credentials.create(principal, body);
        return { status: 201, body: credential, headers: { Location: `/v1/credentials/${credential.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listCredentials',
      method: 'get',
      path: '/credentials',
      tag: 'credentials',
      auth: 'user',
      legacy: true,
      summary: 'List the credentials the caller holds a grant on (admins: all).',
      query: ListQuery,
      responses: { 200: { description: 'Credentials, newest first', schema: z.array(Credential) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.credentials.list(principal, query));
      },
    }),
    defineOperation({
      operationId: 'getCredential',
      method: 'get',
      path: '/credentials/{id}',
      tag: 'credentials',
      auth: 'user',
      legacy: true,
      summary: 'One credential: its public inputs and which secret inputs are set (needs use).',
      params: CredentialIdParams,
      responses: { 200: { description: 'The credential', schema: Credential } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.credentials.get(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'updateCredential',
      method: 'put',
      path: '/credentials/{id}',
      tag: 'credentials',
      auth: 'user',
      legacy: true,
      summary:
        'Change a credential (needs manage): given inputs replace, null clears an optional one, omitted ones stay; the type never changes.',
      params: CredentialIdParams,
      body: CredentialUpdateBody,
      responses: { 200: { description: 'The updated credential', schema: Credential } },
      async handle({ principal, params, body }) {
        return { status: 200, body: await s.credentials.update(principal, params.id, body) };
      },
    }),
    defineOperation({
      operationId: 'deleteCredential',
      method: 'delete',
      path: '/credentials/{id}',
      tag: 'credentials',
      auth: 'user',
      legacy: true,
      summary: 'Delete a credential and the grants on it (needs manage); 409 naming what still uses it.',
      params: CredentialIdParams,
      responses: { 204: { description: 'Deleted' } },
      async handle({ principal, params }) {
        await s.credentials.remove(principal, params.id);
        return { status: 204 };
      },
    }),
  ];
}
