// The generated /v1/openapi.json checked by a real OpenAPI 3.1 validator, not only by our own reading of it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { compileErrors, validate } from '@readme/openapi-parser';
import { createHarness, type Harness } from '../testing/harness.js';

describe.each(DIALECTS)('the OpenAPI document on %s', (dialect) => {
  let h: Harness;
  let doc: Record<string, unknown> & { components: { schemas: Record<string, Record<string, unknown>> } };
  beforeAll(async () => {
    h = await createHarness(dialect);
    const res = await h.http.get('/v1/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(() => h?.close());

  it('is valid OpenAPI 3.1 by @readme/openapi-parser, without errors or warnings', async () => {
    // The validator dereferences in place: it gets a copy. A circular $ref is an error (Baton's schemas have no
    // recursive types; a schema that is a $ref to itself describes nothing), and nothing is fetched from outside.
    const result = await validate(structuredClone(doc) as unknown as Parameters<typeof validate>[0], {
      dereference: { circular: false },
      resolve: { external: false },
    });
    expect({
      valid: result.valid,
      report: result.valid ? '' : compileErrors(result),
      warnings: result.warnings,
    }).toEqual({ valid: true, report: '', warnings: [] });
    expect(result.specification).toBe('OpenAPI');
  });

  it('defines Problem as the RFC 9457 object, not as a $ref to itself', () => {
    const problem = doc.components.schemas.Problem!;
    expect(problem.$ref).toBeUndefined();
    expect(problem).toMatchObject({ type: 'object', required: expect.arrayContaining(['type', 'title', 'status']) });
    expect(Object.keys(problem.properties as object)).toEqual(
      expect.arrayContaining(['type', 'title', 'status', 'detail', 'errors']),
    );
  });
});
