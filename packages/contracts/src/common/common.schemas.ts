import { z } from 'zod';

export const Timestamp = z.string().meta({ description: 'RFC 3339 UTC timestamp', example: '2026-11-21T09:30:00.000Z' });

/** A prefixed, time-sortable id such as `usr_01JD…`. */
export function idOf(prefix: string) {
  return z
    .string()
    .regex(new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`), `must be a ${prefix}_… id`)
    .meta({ example: `${prefix}_01JDQ6Z9X8K3V2M4N5P6Q7R8S9` });
}

/** Any object id: a known prefix, an underscore and 26 Crockford base32 characters. */
export const AnyId = z.string().regex(/^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/, 'must be an object id such as prj_…');

export const ListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(50).meta({ description: 'page size (max 500)' }),
  cursor: z.string().max(200).optional().meta({ description: 'opaque cursor from the previous page’s Link header' }),
});

export const ProblemDetails = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    instance: z.string().optional(),
    request_id: z.string().optional(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });
export type ProblemDetails = z.infer<typeof ProblemDetails>;

