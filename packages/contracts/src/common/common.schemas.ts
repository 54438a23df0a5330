import { z } from 'zod';

export const Timestamp = z
  .string()
  .meta({ description: 'RFC 3339 UTC timestamp', example: '2026-11-21T09:30:00.000Z' });

// eslint-disable-next-line no-control-regex -- rejecting control characters is the point
export const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f]+$/;

/** The name of a team, project, inventory or inventory source: 1–100 characters after trimming, no control characters. */
export const ObjectName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(NO_CONTROL_CHARACTERS, 'must not contain control characters');

/** A zod refinement from a function that answers what is wrong with a value (undefined: nothing); it never throws. */
export function checkedBy(problem: (value: string) => string | undefined) {
  return (value: string, ctx: z.RefinementCtx) => {
    const message = problem(value);
    if (message !== undefined) ctx.addIssue({ code: 'custom', message });
  };
}

/** A prefixed, time-sortable id such as `usr_01JD…`. */
export function idOf(prefix: string) {
  return z
    .string()
    .regex(new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`), `must be a ${prefix}_… id`)
    .meta({ example: `${prefix}_01JDQ6Z9X8K3V2M4N5P6Q7R8S9` });
}

/** Any object id: a known prefix, an underscore and 26 Crockford base32 characters. */
export const AnyId = z.string().regex(/^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/, 'must be an object id such as prj_…');

/**
 * A whole number in a query string: decimal digits only, then the range. Not `z.coerce.number()`, which also
 * reads `0x10`, `1e3`, ` ` and `` as numbers.
 */
export function decimalInteger(min: number, max: number) {
  const message = `must be a decimal integer from ${min} to ${max}`;
  return z
    .string()
    .regex(/^[0-9]+$/, message)
    .transform(Number)
    .pipe(z.number({ error: message }).int(message).min(min, message).max(max, message));
}

export const PageLimit = decimalInteger(1, 500)
  .prefault('50')
  .meta({ description: 'page size: a decimal integer from 1 to 500 (default 50)' });

/**
 * base64url as this server issues it; whether it decodes to a key is checked where the key is used (400 if not).
 * Host-list cursors carry a host name, so the bound leaves room for names of about 6 000 bytes (Node's 16 KiB
 * header limit caps the whole request line anyway).
 */
export const PageCursor = z
  .string()
  .max(8192)
  .regex(/^[A-Za-z0-9_-]+$/, 'not a cursor this server issued')
  .meta({ description: 'opaque cursor from the previous page’s Link header; one that does not decode is a 400' });

export const ListQuery = z.strictObject({ limit: PageLimit, cursor: PageCursor.optional() });

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
