import { InventorySource, InventorySourceBody, InventorySourceIdParams, ListQuery } from '@baton/contracts';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

export function inventorySourceRoutes(s: Pick<Services, 'inventorySources'>): Operation[] {
  return [
    defineOperation({
      operationId: 'createInventorySource',
      method: 'post',
      path: '/inventory-sources',
      tag: 'inventory-sources',
      auth: 'user',
      legacy: true,
      summary:
        'Define a dynamic inventory source (script, plugin or url) writing into a target inventory; the creator gets manage on it.',
      description:
        'refresh_interval_s is stored for the scheduler, which arrives later; until then refresh with POST …/refresh.',
      body: InventorySourceBody,
      responses: { 201: { description: 'Created', schema: InventorySource } },
      async handle({ principal, body }) {
        const src = await s.inventorySources.create(principal, body);
        return { status: 201, body: src, headers: { Location: `/v1/inventory-sources/${src.id}` } };
      },
    }),
    defineOperation({
      operationId: 'listInventorySources',
      method: 'get',
      path: '/inventory-sources',
      tag: 'inventory-sources',
      auth: 'user',
      legacy: true,
      summary: 'Inventory sources the caller may use, newest first.',
      query: ListQuery,
      responses: { 200: { description: 'Sources', schema: z.array(InventorySource) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.inventorySources.list(principal, query));
      },
    }),
    defineOperation({
      operationId: 'getInventorySource',
      method: 'get',
      path: '/inventory-sources/{id}',
      tag: 'inventory-sources',
      auth: 'user',
      legacy: true,
      summary: 'One inventory source with its last refresh state.',
      params: InventorySourceIdParams,
      responses: { 200: { description: 'The source', schema: InventorySource } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.inventorySources.get(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'updateInventorySource',
      method: 'put',
      path: '/inventory-sources/{id}',
      tag: 'inventory-sources',
      auth: 'user',
      legacy: true,
      summary: 'Replace a source’s definition (needs manage); its refresh state stays.',
      params: InventorySourceIdParams,
      body: InventorySourceBody,
      responses: { 200: { description: 'Updated', schema: InventorySource } },
      async handle({ principal, params, body }) {
        return { status: 200, body: await s.inventorySources.update(principal, params.id, body) };
      },
    }),
    defineOperation({
      operationId: 'deleteInventorySource',
      method: 'delete',
      path: '/inventory-sources/{id}',
      tag: 'inventory-sources',
      auth: 'user',
      legacy: true,
      summary: 'Delete an inventory source (needs manage); its target inventory stays.',
      params: InventorySourceIdParams,
      responses: { 204: { description: 'Deleted' } },
      async handle({ principal, params }) {
        await s.inventorySources.remove(principal, params.id);
        return { status: 204 };
      },
    }),
    defineOperation({
      operationId: 'refreshInventorySource',
      method: 'post',
      path: '/inventory-sources/{id}/refresh',
      tag: 'inventory-sources',
      auth: 'user',
      legacy: true,
      summary: 'Run the source now and write its result into the target inventory (needs use); waits for completion.',
      params: InventorySourceIdParams,
      responses: {
        200: { description: 'Refreshed: the source with refreshed_at and host_count', schema: InventorySource },
        422: {
          description:
            'The source failed; the error is recorded as last_error and the inventory keeps its last good content',
        },
      },
      async handle({ principal, params }) {
        return { status: 200, body: await s.inventorySources.refresh(principal, params.id) };
      },
    }),
  ];
}
