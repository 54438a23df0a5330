import { z } from 'zod';
import { idOf, Timestamp, ObjectName } from '../common/common.schemas.js';
import { HostKeyChecking } from '../known-hosts/known-host.schemas.js';

export const InventoryFormat = z.enum(['ini', 'yaml', 'json']);
export type InventoryFormat = z.infer<typeof InventoryFormat>;

/** A group as ansible-inventory --list reports it: its direct hosts and child groups. */
export const InventoryGroup = z
  .object({ name: z.string(), hosts: z.array(z.string()), children: z.array(z.string()) })
  .meta({ id: 'InventoryGroup' });
export type InventoryGroup = z.infer<typeof InventoryGroup>;

/** A host with every group it belongs to, directly or through child groups (`all` left out: every host is in it). */
export const InventoryHost = z.object({ name: z.string(), groups: z.array(z.string()) }).meta({ id: 'InventoryHost' });
export type InventoryHost = z.infer<typeof InventoryHost>;

/** What parsing an inventory yields: the executor produces it, core stores it. */
export interface ParsedInventory {
  format: InventoryFormat;
  hosts: InventoryHost[];
  groups: InventoryGroup[];
  /** the raw `ansible-inventory --list` JSON */
  list: Record<string, unknown>;
}

/** Largest stored inventory: the parsed host list is kept beside it, and the JSON body limit applies first anyway. */
export const MAX_INVENTORY_CONTENT_CHARS = 512 * 1024;

const Name = ObjectName;

export const InventoryBody = z
  .strictObject({
    name: Name,
    content: z
      .string()
      .max(MAX_INVENTORY_CONTENT_CHARS)
      .meta({ description: 'INI, YAML or JSON (the YAML inventory shape); checked with ansible-inventory --list' }),
    host_key_checking: HostKeyChecking.optional().meta({
      description:
        'how runs check its hosts’ SSH keys (GET …/known-hosts lists them); accept_new when created without it, unchanged when a PUT leaves it out',
    }),
  })
  .meta({ id: 'InventoryBody' });

const inventoryFields = {
  id: z.string(),
  name: z.string(),
  format: InventoryFormat,
  host_count: z.number().int(),
  groups: z.array(InventoryGroup),
  host_key_checking: HostKeyChecking,
  created_by: z.string(),
  created_at: Timestamp,
  updated_at: Timestamp,
};
/** An inventory in lists: without its content, which can be large. */
export const InventorySummary = z.object(inventoryFields).meta({ id: 'InventorySummary' });
export const Inventory = z.object({ ...inventoryFields, content: z.string() }).meta({ id: 'Inventory' });

export const InventoryIdParams = z.strictObject({ id: idOf('inv') });
