// Import of AWX and Semaphore exports (issue 16): the query, the report and the document limits.
import { z } from 'zod';

export const IMPORT_FORMATS = ['awx', 'semaphore'] as const;
export const ImportFormat = z.enum(IMPORT_FORMATS);
export type ImportFormat = z.infer<typeof ImportFormat>;

/** Largest document accepted (the body limit of POST /v1/import/{format}). */
export const MAX_IMPORT_BYTES = 20 * 1024 * 1024;
/**
 * Deepest nesting of arrays and objects read from a document; deeper is a 400 at the path where it passes this.
 * The same as every request body's limit (the HTTP layer checks that first), so an import meets no other rule.
 */
export const MAX_IMPORT_DEPTH = 32;

export const ON_CONFLICT = ['skip', 'rename', 'update'] as const;
export const OnConflict = z.enum(ON_CONFLICT);
export type OnConflict = z.infer<typeof OnConflict>;

/** The kinds of Baton object an import creates, as the report counts them. */
export const IMPORTED_KINDS = [
  'user',
  'team',
  'membership',
  'grant',
  'credential',
  'project',
  'inventory',
  'inventory_source',
  'template',
  'schedule',
  'trigger',
  'policy',
] as const;
export const ImportedKind = z.enum(IMPORTED_KINDS);
export type ImportedKind = z.infer<typeof ImportedKind>;

export const ImportFormatParams = z.strictObject({ format: ImportFormat });

const Flag = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .meta({ description: 'true or false' });

export const ImportQuery = z
  .strictObject({
    dry_run: Flag.optional().meta({ description: 'true: answer the report of what would happen, write nothing' }),
    on_conflict: OnConflict.default('skip').meta({
      description:
        'when an object of that kind and name exists: `skip` keeps it (references point at it), `rename` imports a copy named "<name> (imported)", `update` overwrites its fields (stored secrets are kept)',
    }),
  })
  .meta({ id: 'ImportQuery' });
export type ImportQuery = z.infer<typeof ImportQuery>;

export const ImportSkipped = z
  .object({ kind: z.string(), name: z.string(), reason: z.string() })
  .meta({ id: 'ImportSkipped' });
export type ImportSkipped = z.infer<typeof ImportSkipped>;

export const ImportReport = z
  .object({
    format: ImportFormat,
    source_version: z
      .string()
      .optional()
      .meta({ description: 'the edition the document looks like (neither tool writes a version)' }),
    dry_run: z.boolean(),
    on_conflict: OnConflict,
    created: z.partialRecord(ImportedKind, z.number().int()).meta({ description: 'objects created, by kind' }),
    updated: z.partialRecord(ImportedKind, z.number().int()).meta({ description: 'existing objects overwritten' }),
    skipped: z.array(ImportSkipped).meta({ description: 'objects not imported, each with why' }),
    warnings: z.array(z.string()).meta({ description: 'what was imported only in part, or could not be mapped' }),
    needs_secret: z
      .array(z.string())
      .meta({ description: 'ids of imported credentials whose secrets the export did not carry: set them' }),
    users_needing_password: z
      .array(z.object({ id: z.string(), username: z.string() }))
      .meta({ description: 'imported users who cannot sign in until a password is set' }),
    id_map: z.record(z.string(), z.string()).meta({
      description:
        'source reference (kind:name) → Baton id. In a dry run, ids of objects it would create are provisional (the import makes new ones); ids of existing objects are real',
    }),
  })
  .meta({ id: 'ImportReport' });
export type ImportReport = z.infer<typeof ImportReport>;
