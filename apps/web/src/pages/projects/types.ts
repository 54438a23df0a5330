// The API's shapes for the input pages, from the contracts' schemas (types only: no zod in the bundle).
import type {
  Credential as CredentialSchema,
  Inventory as InventorySchema,
  InventorySource as InventorySourceSchema,
  InventorySummary as InventorySummarySchema,
  Project as ProjectSchema,
  ProjectRequirements as ProjectRequirementsSchema,
} from '@baton/contracts';

/** What a schema validates to (zod 4 keeps it on `_zod.output`). */
type Out<T extends { _zod: { output: unknown } }> = T['_zod']['output'];

export type Project = Out<typeof ProjectSchema>;
export type Inventory = Out<typeof InventorySchema>;
export type InventorySummary = Out<typeof InventorySummarySchema>;
export type InventorySource = Out<typeof InventorySourceSchema>;
export type Credential = Out<typeof CredentialSchema>;
export type ProjectRequirements = Out<typeof ProjectRequirementsSchema>;
/** What POST …/sync answers: the project, and (from servers that find them) the Galaxy requirements of the commit. */
export type ProjectSyncResult = Project & { requirements?: ProjectRequirements[] };
