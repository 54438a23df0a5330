// Reading an inventory's text in the browser: which format it is, its syntax errors before sending, and the
// host and group variables (the API stores hosts and groups, not variables).
import { parse as parseYaml, YAMLParseError } from 'yaml';

export type InventoryFormat = 'ini' | 'yaml' | 'json';
export type Vars = Record<string, unknown>;

export interface InventoryVars {
  hostVars: Record<string, Vars>;
  groupVars: Record<string, Vars>;
}

const INI_SECTION = /^\s*\[[^\]]+\]\s*([#;].*)?$/;
const YAML_KEY = /^[A-Za-z0-9_.-]+:(\s|$)/;

/** The format the text is written in, as far as can be told from its shape (ansible makes the final call). */
export function detectFormat(text: string): InventoryFormat {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) return 'json';
  const lines = meaningfulLines(text);
  if (lines.some((l) => INI_SECTION.test(l))) return 'ini';
  const first = lines[0] ?? '';
  if (first.startsWith('---') || YAML_KEY.test(first)) return 'yaml';
  return 'ini';
}

function meaningfulLines(text: string): string[] {
  return text.split(/\r?\n/).filter((l) => l.trim() !== '' && !/^\s*[#;]/.test(l));
}

/** A syntax error found before sending (YAML and JSON), with its line; undefined when the text reads well. */
export function syntaxProblem(text: string): string | undefined {
  if (text.trim() === '') return 'the inventory is empty: add at least one host';
  const format = detectFormat(text);
  if (format === 'ini') return undefined;
  try {
    const doc: unknown = format === 'json' ? JSON.parse(text) : parseYaml(text);
    if (doc !== null && (typeof doc !== 'object' || Array.isArray(doc)))
      return `a ${format.toUpperCase()} inventory is a mapping of groups (such as all:), not a ${Array.isArray(doc) ? 'list' : 'single value'}`;
    return undefined;
  } catch (err) {
    if (err instanceof YAMLParseError) {
      const at = err.linePos?.[0];
      return `YAML syntax error${at ? ` at line ${at.line}, column ${at.col}` : ''}: ${err.message.split('\n')[0]}`;
    }
    return `JSON syntax error: ${(err as Error).message}`;
  }
}

/** Host and group variables from the text; an empty result when it cannot be read (the API has the final say). */
export function readVars(text: string): InventoryVars {
  const vars: InventoryVars = { hostVars: {}, groupVars: {} };
  try {
    if (detectFormat(text) === 'ini') readIni(text, vars);
    else readYamlGroups(parseYaml(text) as unknown, vars);
  } catch {
    // Stored content has passed ansible-inventory; a shape this reader does not know just shows no variables.
  }
  return vars;
}

function merge(into: Record<string, Vars>, key: string, more: Vars): void {
  into[key] = { ...(into[key] ?? {}), ...more };
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The YAML/JSON inventory shape: groups with `hosts: {name: vars}`, `vars` and `children`. */
function readYamlGroups(doc: unknown, out: InventoryVars): void {
  if (!isMapping(doc)) return;
  const walk = (name: string, group: unknown) => {
    if (!isMapping(group)) return;
    if (isMapping(group.vars)) merge(out.groupVars, name, group.vars);
    if (isMapping(group.hosts))
      for (const [host, hv] of Object.entries(group.hosts)) if (isMapping(hv)) merge(out.hostVars, host, hv);
    if (isMapping(group.children)) for (const [child, g] of Object.entries(group.children)) walk(child, g);
  };
  for (const [name, group] of Object.entries(doc)) walk(name, group);
}

/** `key=value` pairs of an INI line; values may be quoted. */
function pairs(text: string): Vars {
  const out: Vars = {};
  const re = /([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*("(?:[^"\\]|\\.)*"|'[^']*'|\S+)/g;
  for (const m of text.matchAll(re)) {
    const raw = m[2]!;
    out[m[1]!] = /^["']/.test(raw) ? raw.slice(1, -1) : raw;
  }
  return out;
}

/** The INI inventory shape: `[group]` host lines with inline vars, `[group:vars]` and `[group:children]`. */
function readIni(text: string, out: InventoryVars): void {
  let section = 'ungrouped';
  let kind: 'hosts' | 'vars' | 'children' = 'hosts';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\s[#;].*$/, '').trim();
    if (!line || /^[#;]/.test(line)) continue;
    const head = /^\[([^\]:]+)(?::(\w+))?\]$/.exec(line);
    if (head) {
      section = head[1]!;
      kind = head[2] === 'vars' ? 'vars' : head[2] === 'children' ? 'children' : 'hosts';
      continue;
    }
    if (kind === 'vars') merge(out.groupVars, section, pairs(line));
    else if (kind === 'hosts') {
      const [host, ...rest] = line.split(/\s+/);
      const hv = pairs(rest.join(' '));
      if (host && Object.keys(hv).length) merge(out.hostVars, host, hv);
    }
  }
}
