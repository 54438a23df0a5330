import {
  Inventory,
  InventoryBody,
  InventoryHost,
  InventoryIdParams,
  InventorySummary,
  ListQuery,
} from '@baton/contracts';
import { z } from 'zod';
import { pageReply } from '../http/paging.js';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

export function inventoryRoutes(s: Pick<Services, 'inventories'>): Operation[] {
  return [
    defineOperation({
      operationId: 'createInventory',
      method: 'post',
      path: '/inventories',
      tag: 'inventories',
      auth: 'user',
      legacy: true,
      summary:
        'Store an inventory (INI, YAML or JSON), checked with ansible-inventory --list; the creator gets manage on it.',
      body: InventoryBody,
      responses: {
        201: { description: 'Created', schema: Inventory },
        400: { description: 'Invalid body, or ansible-inventory refused the content (its message is the detail)' },
      },
      async handle({ principal, body }) {
        const inv = await s.inventories.create(principal, body);
        return {
          status: 201,
          body: { ...inv, content: body.content },
          headers: { Location: `/v1/inventories/${inv.id}` },
        };
      },
    }),
    defineOperation({
      operationId: 'listInventories',
      method: 'get',
      path: '/inventories',
      tag: 'inventories',
      auth: 'user',
      legacy: true,
      summary: 'Inventories the caller may use, newest first, without their content.',
      query: ListQuery,
      responses: { 200: { description: 'Inventories', schema: z.array(InventorySummary) } },
      async handle({ principal, query, req }) {
        return pageReply(req, await s.inventories.list(principal, query));
      },
    }),
    defineOperation({
      operationId: 'getInventory',
      method: 'get',
      path: '/inventories/{id}',
      tag: 'inventories',
      auth: 'user',
      legacy: true,
      summary: 'One inventory with its content.',
      params: InventoryIdParams,
      responses: { 200: { description: 'The inventory', schema: Inventory } },
      async handle({ principal, params }) {
        return { status: 200, body: await s.inventories.get(principal, params.id) };
      },
    }),
    defineOperation({
      operationId: 'listInventoryHosts',
      method: 'get',
      path: '/inventories/{id}/hosts',
      tag: 'inventories',
      auth: 'user',
      summary: "An inventory's hosts in name order with their groups, from the list stored at save time.",
      params: InventoryIdParams,
      query: ListQuery,
      responses: { 200: { description: 'Hosts', schema: z.array(InventoryHost) } },
      async handle({ principal, params, query, req }) {
        return pageReply(req, await s.inventories.listHosts(principal, params.id, query));
      },
    }),
    defineOperation({
      operationId: 'updateInventory',
      method: 'put',
      path: '/inventories/{id}',
      tag: 'inventories',
      auth: 'user',
      legacy: true,
      summary: 'Replace an inventory’s name and content (needs manage).',
      params: InventoryIdParams,
      body: InventoryBody,
      responses: { 200: { description: 'Updated', schema: Inventory } },
      async handle({ principal, params, body }) {
        return { status: 200, body: await s.inventories.update(principal, params.id, body) };
      },
    }),
    defineOperation({
      operationId: 'deleteInventory',
      method: 'delete',
      path: '/inventories/{id}',
      tag: 'inventories',
      auth: 'user',
      legacy: true,
      summary: 'Delete an inventory (needs manage); 409 while an inventory source targets it.',
      params: InventoryIdParams,
      responses: { 204: { description: 'Deleted' } },
      async handle({ principal, params }) {
        await s.inventories.remove(principal, params.id);
        return { status: 204 };
      },
    }),
  ];
}
