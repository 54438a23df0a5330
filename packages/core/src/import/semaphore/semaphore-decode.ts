// Text in a Semaphore backup that holds JSON: environment `json` (extra vars) and `env` (environment variables),
// template `arguments` (CLI arguments) and, in v2.10.2–26, `survey_vars`. Decoded here, once, and held to the same
// rules as the document (depth, storable text, structure): a string that is not what it should hold is the
// document's problem at that string's path.
import {
  documentShapeIssue,
  MAX_IMPORT_DEPTH,
  parseDocument,
  SemaphoreSurveyVars,
  type SemaphoreBackup,
  type SemaphoreSurveyVar,
} from '@baton/contracts';
import type { DocumentProblem } from '../import-plan.js';

export interface DecodedEnvironment {
  json: Record<string, unknown>;
  env: Record<string, unknown>;
}
export interface DecodedTemplate {
  arguments: string[];
  survey: SemaphoreSurveyVar[];
}
export interface Decoded {
  environments: DecodedEnvironment[];
  templates: DecodedTemplate[];
}

type Read<T> = { ok: true; value: T } | { ok: false; problem: DocumentProblem };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON.parse without throwing: undefined when `source` is not JSON. */
function parseJson(source: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(source) as unknown };
  } catch {
    return undefined;
  }
}

/** The JSON a string holds, checked like the document itself; `null`/absent/blank text reads as `empty`. */
function readJson<T>(
  source: string | null | undefined,
  path: string,
  what: string,
  empty: T,
  accept: (v: unknown) => Read<T>,
): Read<T> {
  if (source === null || source === undefined || source.trim() === '') return { ok: true, value: empty };
  const parsed = parseJson(source);
  if (!parsed) return { ok: false, problem: { path, message: `must be a string holding ${what} (it is not JSON)` } };
  const shape = documentShapeIssue(parsed.value, MAX_IMPORT_DEPTH);
  if (shape) return { ok: false, problem: { path: shape.path.replace(/^body/, path), message: shape.message } };
  return accept(parsed.value);
}

const objectAt =
  (path: string) =>
  (v: unknown): Read<Record<string, unknown>> =>
    isObject(v) ? { ok: true, value: v } : { ok: false, problem: { path, message: 'must hold a JSON object' } };

const stringsAt =
  (path: string) =>
  (v: unknown): Read<string[]> =>
    Array.isArray(v) && v.every((a) => typeof a === 'string')
      ? { ok: true, value: v }
      : { ok: false, problem: { path, message: 'must hold a JSON array of strings' } };

const surveyAt =
  (path: string) =>
  (v: unknown): Read<SemaphoreSurveyVar[]> => {
    const parsed = parseDocument(SemaphoreSurveyVars, v);
    return parsed.ok
      ? { ok: true, value: parsed.value }
      : { ok: false, problem: { path: parsed.issue.path.replace(/^body/, path), message: parsed.issue.message } };
  };

/** Every JSON string of the backup decoded, or the first that is not what it should hold. */
export function decodeBackup(backup: SemaphoreBackup): Read<Decoded> {
  const environments: DecodedEnvironment[] = [];
  for (const [i, e] of (backup.environments ?? []).entries()) {
    const at = `body.environments.${i}`;
    const json = readJson(e.json, `${at}.json`, 'a JSON object', {}, objectAt(`${at}.json`));
    if (!json.ok) return json;
    const env = readJson(e.env, `${at}.env`, 'a JSON object', {}, objectAt(`${at}.env`));
    if (!env.ok) return env;
    environments.push({ json: json.value, env: env.value });
  }
  const templates: DecodedTemplate[] = [];
  for (const [i, t] of (backup.templates ?? []).entries()) {
    const at = `body.templates.${i}`;
    const args = readJson(t.arguments, `${at}.arguments`, 'a JSON array of strings', [], stringsAt(`${at}.arguments`));
    if (!args.ok) return args;
    let survey: SemaphoreSurveyVar[] = [];
    if (typeof t.survey_vars === 'string') {
      const read = readJson(t.survey_vars, `${at}.survey_vars`, 'a JSON list of survey variables', [], (v) =>
        v === null ? { ok: true, value: [] } : surveyAt(`${at}.survey_vars`)(v),
      );
      if (!read.ok) return read;
      survey = read.value;
    } else if (Array.isArray(t.survey_vars)) survey = t.survey_vars;
    templates.push({ arguments: args.value, survey });
  }
  return { ok: true, value: { environments, templates } };
}
