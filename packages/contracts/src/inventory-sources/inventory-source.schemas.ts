import { z } from 'zod';
import { idOf, Timestamp, ObjectName } from '../common/common.schemas.js';
import { refusedHostReason } from '../network/refused-address.js';
import { tryParseUrl } from '../network/safe-url.js';

export const InventorySourceKind = z.enum(['script', 'plugin', 'url']);
export type InventorySourceKind = z.infer<typeof InventorySourceKind>;

/** Scheduling refreshes is the scheduler's job; the interval is only stored until then. */
export const MIN_REFRESH_INTERVAL_S = 60;

const Name = ObjectName;

/** A path inside a project checkout: relative, no `..` segment, so it can never leave the checkout. */
export const ProjectRelativePath = z
  .string()
  .min(1)
  .max(1024)
  // eslint-disable-next-line no-control-regex -- rejecting control characters is the point
  .regex(/^[^\u0000-\u001f\u007f\\]+$/, 'must not contain control characters or backslashes')
  .refine((p) => !p.startsWith('/'), 'must be relative to the project root')
  .refine((p) => !p.split('/').includes('..'), "must not contain a '..' segment");

const MAX_URL_CHARS = 2048;

/**
 * Why an inventory URL is refused, or undefined when it may be saved: https only, no credentials inside, and no
 * host that refusedHostReason refuses (cloud metadata names and link-local, unspecified or metadata addresses,
 * also when written as an IPv4-mapped, NAT64 or 6to4 IPv6 address). Its addresses are checked again after DNS
 * at fetch time. Never throws: a URL that does not parse is a reason like any other.
 */
export function inventoryUrlProblem(text: string): string | undefined {
  if (text.length === 0 || text.length > MAX_URL_CHARS) return `must be 1 to ${MAX_URL_CHARS} characters`;
  // URL parsing would silently drop tabs and newlines, so what is stored would not be what is fetched.
  // eslint-disable-next-line no-control-regex -- rejecting control characters and spaces is the point
  if (/[\s\u0000-\u001f\u007f]/.test(text)) return 'must not contain spaces or control characters';
  const url = tryParseUrl(text);
  if (!url || url.protocol !== 'https:' || url.hostname === '') return 'must be an https:// URL';
  if (url.username || url.password) return 'put no credentials in the URL; use credential_id';
  const refused = refusedHostReason(url.hostname);
  return refused && `refused: ${refused}; link-local, unspecified and cloud metadata addresses are never fetched`;
}

export const InventoryUrl = z
  .string()
  .superRefine((u, ctx) => {
    const problem = inventoryUrlProblem(u);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({ format: 'uri', maxLength: MAX_URL_CHARS, description: 'https only; returns inventory-script JSON' });

const sourceFields = {
  name: Name,
  kind: InventorySourceKind,
  inventory_id: idOf('inv'),
  project_id: idOf('prj').nullish(),
  path: ProjectRelativePath.nullish(),
  url: InventoryUrl.nullish(),
  credential_id: idOf('cred').nullish(),
  refresh_interval_s: z
    .number()
    .int()
    .min(MIN_REFRESH_INTERVAL_S)
    .max(30 * 24 * 3600)
    .nullish()
    .meta({ description: `stored for the scheduler (which arrives later); at least ${MIN_REFRESH_INTERVAL_S}` }),
};

/** Which fields each kind needs and which it must not carry. */
const KIND_FIELDS: Record<
  InventorySourceKind,
  { required: Array<keyof typeof sourceFields>; forbidden: Array<keyof typeof sourceFields> }
> = {
  script: { required: ['project_id', 'path'], forbidden: ['url', 'credential_id'] },
  plugin: { required: ['project_id', 'path'], forbidden: ['url', 'credential_id'] },
  url: { required: ['url'], forbidden: ['project_id', 'path'] },
};

export const InventorySourceBody = z
  .strictObject(sourceFields)
  .superRefine((body, ctx) => {
    const rule = KIND_FIELDS[body.kind];
    for (const f of rule.required) {
      if (body[f] === undefined || body[f] === null)
        ctx.addIssue({ code: 'custom', path: [f], message: `required when kind is ${body.kind}` });
    }
    for (const f of rule.forbidden) {
      if (body[f] !== undefined && body[f] !== null)
        ctx.addIssue({ code: 'custom', path: [f], message: `not used when kind is ${body.kind}` });
    }
  })
  .meta({ id: 'InventorySourceBody' });
export type InventorySourceBody = z.infer<typeof InventorySourceBody>;

export const InventorySource = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: InventorySourceKind,
    inventory_id: z.string(),
    project_id: z.string().nullable(),
    path: z.string().nullable(),
    url: z.string().nullable(),
    credential_id: z.string().nullable(),
    refresh_interval_s: z.number().int().nullable(),
    refreshed_at: Timestamp.nullable(),
    host_count: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_by: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'InventorySource' });

export const InventorySourceIdParams = z.strictObject({ id: idOf('src') });
