// What a project's Galaxy requirements files ask for, as a sync reports it: role and collection names (or sources)
// read with a YAML parser. Total: a file that does not parse, or is not what ansible-galaxy reads, is reported with
// its problem (the run would fail on it), never thrown.
import type { ProjectRequirements } from '@baton/contracts';
import { parse } from 'yaml';

/** A requirements file as git gave it: content, or why it could not be read. */
export interface RequirementsText {
  path: string;
  content?: string | undefined;
  problem?: string | undefined;
}

const MAX_LISTED = 200;

/** A requirement entry's name: a string as is; an object by name (then src/source), its version and source. */
function nameOf(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  if (typeof entry !== 'object' || entry === null) return undefined;
  const e = entry as Record<string, unknown>;
  const name = [e.name, e.src, e.source].find((v): v is string => typeof v === 'string');
  const version = typeof e.version === 'string' || typeof e.version === 'number' ? ` (${String(e.version)})` : '';
  // A role installed under a name of its own from a source: both matter.
  const from = typeof e.src === 'string' && e.src !== name ? ` from ${e.src}` : '';
  return name === undefined ? undefined : `${name}${version}${from}`;
}

const names = (list: unknown): string[] =>
  Array.isArray(list)
    ? list
        .map(nameOf)
        .filter((n): n is string => n !== undefined)
        .slice(0, MAX_LISTED)
    : [];

export function describeRequirements(files: readonly RequirementsText[]): ProjectRequirements[] {
  return files.map((f): ProjectRequirements => {
    if (f.content === undefined)
      return { path: f.path, roles: [], collections: [], problem: f.problem ?? 'unreadable' };
    let doc: unknown;
    try {
      doc = parse(f.content, { maxAliasCount: 100 });
    } catch (err) {
      return {
        path: f.path,
        roles: [],
        collections: [],
        problem: `not YAML: ${(err as Error).message.split('\n')[0]}`,
      };
    }
    const underCollections = f.path.startsWith('collections/');
    if (Array.isArray(doc))
      return underCollections
        ? {
            path: f.path,
            roles: [],
            collections: [],
            problem: 'a plain list: collection requirements need `collections:`',
          }
        : { path: f.path, roles: names(doc), collections: [] };
    if (doc === null || doc === undefined) return { path: f.path, roles: [], collections: [] };
    if (typeof doc !== 'object')
      return { path: f.path, roles: [], collections: [], problem: 'neither a list nor a mapping' };
    const d = doc as Record<string, unknown>;
    const roles = f.path.startsWith('collections/') ? [] : names(d.roles);
    const collections = f.path.startsWith('roles/') ? [] : names(d.collections);
    const problem =
      d.roles === undefined && d.collections === undefined ? 'names neither `roles:` nor `collections:`' : undefined;
    return { path: f.path, roles, collections, ...(problem ? { problem } : {}) };
  });
}
