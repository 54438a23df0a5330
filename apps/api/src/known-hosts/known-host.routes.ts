import {
  InventoryIdParams,
  KnownHost,
  KnownHostList,
  KnownHostParam,
  KnownHostPinBody,
  KnownHostsReplaceBody,
  ProjectIdParams,
} from '@baton/contracts';
import type { KnownHostScope } from '@baton/db';
import { z } from 'zod';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

const OWNERS = [
  {
    scope: 'inventory',
    path: '/inventories/{id}/known-hosts',
    tag: 'inventories',
    params: InventoryIdParams,
    name: 'Inventory',
    of: "an inventory's hosts",
  },
  {
    scope: 'project',
    path: '/projects/{id}/known-hosts',
    tag: 'projects',
    params: ProjectIdParams,
    name: 'Project',
    of: "a project's git server",
  },
] as const;

/** GET/PUT/DELETE of an inventory's or a project's SSH host keys, and PUT/DELETE of one host's. */
export function knownHostRoutes(s: Pick<Services, 'knownHosts'>): Operation[] {
  return OWNERS.flatMap(({ scope, path, tag, params, name, of }) => {
    const HostParams = params.extend({ host: KnownHostParam });
    const sc: KnownHostScope = scope;
    return [
      defineOperation({
        operationId: `list${name}KnownHosts`,
        method: 'get',
        path,
        tag,
        auth: 'user',
        summary: `The SSH host keys stored for ${of} and the host key policy (needs use).`,
        params,
        responses: { 200: { description: 'Host keys in host order', schema: KnownHostList } },
        async handle({ principal, params: p }) {
          return { status: 200, body: await s.knownHosts.list(principal, sc, p.id) };
        },
      }),
      defineOperation({
        operationId: `replace${name}KnownHosts`,
        method: 'put',
        path,
        tag,
        auth: 'user',
        summary: `Replace every stored host key of ${of} with the given known_hosts lines, all pinned (needs manage).`,
        params,
        body: KnownHostsReplaceBody,
        responses: {
          200: { description: 'The keys now stored', schema: KnownHostList },
          400: { description: 'A line that is not a plain known_hosts entry (its number is in the message)' },
        },
        async handle({ principal, params: p, body }) {
          return { status: 200, body: await s.knownHosts.replaceAll(principal, sc, p.id, body.known_hosts) };
        },
      }),
      defineOperation({
        operationId: `forget${name}KnownHosts`,
        method: 'delete',
        path,
        tag,
        auth: 'user',
        summary: `Forget every stored host key of ${of} (needs manage); accept_new records them again on first contact.`,
        params,
        responses: { 204: { description: 'Forgotten' } },
        async handle({ principal, params: p }) {
          await s.knownHosts.forget(principal, sc, p.id);
          return { status: 204 };
        },
      }),
      defineOperation({
        operationId: `pin${name}HostKey`,
        method: 'put',
        path: `${path}/{host}`,
        tag,
        auth: 'user',
        summary: `Pin one host's keys for ${of}, replacing what was stored for it (needs manage).`,
        params: HostParams,
        body: KnownHostPinBody,
        responses: {
          200: { description: "The host's keys now stored", schema: z.array(KnownHost) },
          400: { description: 'A line that is not a key of this host' },
        },
        async handle({ principal, params: p, body }) {
          return { status: 200, body: await s.knownHosts.pinHost(principal, sc, p.id, p.host, body.keys) };
        },
      }),
      defineOperation({
        operationId: `forget${name}HostKey`,
        method: 'delete',
        path: `${path}/{host}`,
        tag,
        auth: 'user',
        summary: `Forget one host's stored keys for ${of} (needs manage); 404 when none is stored.`,
        params: HostParams,
        responses: { 204: { description: 'Forgotten' } },
        async handle({ principal, params: p }) {
          await s.knownHosts.forget(principal, sc, p.id, p.host);
          return { status: 204 };
        },
      }),
    ];
  });
}
