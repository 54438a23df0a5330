import { ProblemDetails } from '@baton/contracts';
import { z } from 'zod';
import { API_PREFIX, fullPath, type Operation } from './registry.js';

type JsonSchema = Record<string, unknown>;

/** Converts a zod schema, moving named schemas (`.meta({ id })`) into components. */
function makeConverter(components: Record<string, JsonSchema>) {
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/'))
          out[k] = `#/components/schemas/${v.slice(8)}`;
        else out[k] = rewrite(v);
      }
      return out;
    }
    return node;
  };
  return (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const json = z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any', io }) as JsonSchema;
    const { $schema: _s, $defs, ...rest } = json;
    for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>))
      components[id] = rewrite(def) as JsonSchema;
    return rewrite(rest) as JsonSchema;
  };
}

function parametersOf(
  convert: ReturnType<typeof makeConverter>,
  schema: z.ZodType | undefined,
  where: 'path' | 'query',
) {
  if (!schema) return [];
  const json = convert(schema, 'input');
  const props = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: s,
    ...(typeof s.description === 'string' ? { description: s.description } : {}),
  }));
}

export function buildOpenApi(ops: Operation[], info: { version: string }): Record<string, unknown> {
  const components: Record<string, JsonSchema> = {};
  const convert = makeConverter(components);
  const paths: Record<string, Record<string, unknown>> = {};
  // A named schema converts to a $ref to itself, its body moved into components: so only convert, never assign
  // the result (that made Problem a $ref to Problem).
  convert(ProblemDetails, 'output');

  const describe = (op: Operation, legacy: boolean) => {
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(op.responses)) {
      const type = r.contentType ?? 'application/json';
      responses[status] = {
        description: r.description,
        ...(r.schema ? { content: { [type]: { schema: convert(r.schema, 'output') } } } : {}),
      };
    }
    responses.default = {
      description: 'Error',
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
    return {
      operationId: legacy ? `${op.operationId}Legacy` : op.operationId,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: [op.tag],
      ...(legacy ? { deprecated: true } : {}),
      ...(op.auth === 'user' ? { security: [{ bearer: [] }] } : { security: [] }),
      parameters: [...parametersOf(convert, op.params, 'path'), ...parametersOf(convert, op.query, 'query')],
      ...(op.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: convert(op.body, 'input') } } } }
        : {}),
      responses,
    };
  };

  for (const op of ops) {
    (paths[fullPath(op)] ??= {})[op.method] = describe(op, false);
    if (op.legacy) (paths[op.path] ??= {})[op.method] = describe(op, true);
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Baton',
      version: info.version,
      description: `Self-hosted server for running Ansible automation. Operations are under ${API_PREFIX}; unprefixed copies of older editions are deprecated.`,
    },
    servers: [{ url: '/' }],
    paths,
    components: { schemas: components, securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
  };
}
