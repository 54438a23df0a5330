// What each AI helper asks the model to answer: a zod schema (the check on the way back) and its JSON Schema (sent
// as the response format or the forced tool's input schema). Models may send null for what they leave out.
import { z } from 'zod';

const Text = (max: number) => z.string().max(max);
const optional = <T extends z.ZodType>(t: T) => t.nullable().optional();

export const ExplainAnswer = z.object({
  summary: Text(4000),
  likely_causes: z.array(Text(2000)).max(20),
  suggested_fixes: z.array(Text(2000)).max(20),
  cited_events: z.array(z.number().int()).max(100),
});

export const DraftAnswer = z.object({ script: Text(100_000), notes: Text(8000) });

export const AskModelAnswer = z.object({
  answer: Text(8000),
  citations: z.array(z.object({ kind: z.enum(['run', 'host', 'drift', 'task']), id: Text(300) })).max(50),
});

/** Loose on purpose: the proposal's real check is RunProposal and the submission (reasons → 422, not 502). */
export const ProposeAnswer = z.object({
  project_id: z.string(),
  playbook: z.string(),
  ref: optional(z.string()),
  inventory_id: z.string(),
  limit: optional(z.string()),
  extra_vars: optional(z.record(z.string(), z.unknown())),
  check: optional(z.boolean()),
  rationale: z.string(),
});

/** A model answer's schema, as core checks answers against it (core itself never imports zod). */
export type AnswerSchema<T> = z.ZodType<T>;

/** The answer format of a request: a name, what it is, and the JSON Schema of `schema` (an object type). */
export function answerFormat(
  name: string,
  description: string,
  schema: z.ZodType,
): { name: string; description: string; schema: Record<string, unknown> } {
  const json = z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return { name, description, schema: json };
}
