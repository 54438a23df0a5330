// Parses inventories with the real `ansible-inventory --list`, so what Baton stores is exactly what ansible reads.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  type InventoryFormat,
  type InventoryGroup,
  type InventoryHost,
  InventoryParseError,
  type ParsedInventory,
} from '@baton/contracts';
import { runCapped } from '../process/capped-process.js';
import type { Sandbox } from '../sandbox/sandbox.js';

/** Declared in contracts, so core can match it with instanceof. */
export { InventoryParseError };

/** A dynamic source failed: refused or unreachable URL, bad script output, a script that timed out… */
export class InventorySourceError extends Error {
  override readonly name = 'InventorySourceError';
}

/** What a dynamic source yields: the parsed inventory plus the content to store (YAML-shaped JSON). */
export interface SourceInventory extends ParsedInventory {
  content: string;
}

export const DEFAULT_PARSE_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_LIST_BYTES = 16 * 1024 * 1024;

export const EXTENSION: Record<InventoryFormat, string> = { ini: '.ini', yaml: '.yaml', json: '.json' };
/** Only the plugin that reads the detected format: errors then name one plugin, and neither executes anything. */
export const PLUGIN_FOR: Record<InventoryFormat, string> = { ini: 'ini', yaml: 'yaml', json: 'yaml' };

/**
 * JSON when it starts with `{`; YAML when the first meaningful line is `---` or a `key:` mapping line; otherwise
 * INI (`[group]` headers and bare host lines). An INI host with a port (`web:2222`) has no colon at the end.
 */
export function detectInventoryFormat(content: string): InventoryFormat {
  if (content.trimStart().startsWith('{')) return 'json';
  const first = content
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => l !== '' && !l.startsWith('#') && !l.startsWith(';'));
  if (first === undefined) return 'ini';
  return first === '---' || /^[\w.\-"']+\s*:(\s|$)/.test(first) ? 'yaml' : 'ini';
}

type ScriptGroup = { hosts?: unknown; vars?: unknown; children?: unknown };
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const stringList = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

/** Groups and hosts of an `ansible-inventory --list` document (inventory-script JSON). */
export function summarizeInventoryList(list: Record<string, unknown>): Pick<ParsedInventory, 'hosts' | 'groups'> {
  const groups = new Map<string, InventoryGroup>();
  const groupNamed = (name: string) => {
    let g = groups.get(name);
    if (!g) groups.set(name, (g = { name, hosts: [], children: [] }));
    return g;
  };
  for (const [name, value] of Object.entries(list)) {
    if (name === '_meta' || !isObject(value)) continue;
    const g = groupNamed(name);
    g.hosts.push(...stringList(value.hosts));
    g.children.push(...stringList(value.children));
  }
  // A child without hosts of its own is listed only under its parent.
  for (const g of [...groups.values()]) for (const c of g.children) groupNamed(c);

  const parents = new Map<string, string[]>();
  for (const g of groups.values()) for (const c of g.children) parents.set(c, [...(parents.get(c) ?? []), g.name]);
  const hostGroups = new Map<string, Set<string>>();
  for (const g of groups.values()) {
    for (const h of g.hosts) {
      const set = hostGroups.get(h) ?? new Set<string>();
      hostGroups.set(h, set);
      const pending = [g.name];
      while (pending.length) {
        const name = pending.pop()!;
        if (set.has(name)) continue; // groups may form a cycle in a hand-written script's output
        set.add(name);
        pending.push(...(parents.get(name) ?? []));
      }
    }
  }
  const hosts: InventoryHost[] = [...hostGroups.entries()]
    .map(([name, set]) => ({ name, groups: [...set].filter((g) => g !== 'all').sort() }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return { hosts, groups: [...groups.values()].sort((a, b) => a.name.localeCompare(b.name)) };
}

/**
 * Converts inventory-script JSON (`{group: {hosts, vars, children} | [hosts], _meta: {hostvars}}`, also what
 * `--list` prints) to the YAML inventory shape, which the `yaml` plugin reads from a plain, non-executable
 * file. Host variables go on a host's first appearance; ansible merges them per host anyway.
 */
export function scriptJsonToYamlInventory(script: unknown): Record<string, unknown> {
  if (!isObject(script))
    throw new InventorySourceError('not inventory-script JSON: the top level must be an object of groups');
  const meta = script._meta;
  const hostvars = isObject(meta) && isObject(meta.hostvars) ? meta.hostvars : {};
  const placed = new Set<string>();
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(script)) {
    if (name === '_meta') continue;
    const group: ScriptGroup = Array.isArray(raw) ? { hosts: raw } : isObject(raw) ? raw : {};
    if (!Array.isArray(raw) && !isObject(raw))
      throw new InventorySourceError(`not inventory-script JSON: group ${name} must be an object or a list of hosts`);
    const hosts: Record<string, unknown> = {};
    for (const h of stringList(group.hosts)) {
      hosts[h] = placed.has(h) ? null : (hostvars[h] ?? null);
      placed.add(h);
    }
    const entry: Record<string, unknown> = {};
    if (Object.keys(hosts).length) entry.hosts = hosts;
    if (isObject(group.vars) && Object.keys(group.vars).length) entry.vars = group.vars;
    const children = stringList(group.children);
    if (children.length) entry.children = Object.fromEntries(children.map((c) => [c, null]));
    out[name] = entry;
  }
  return out;
}

export interface ListRun {
  inventoryPath: string;
  workDir: string;
  enablePlugins: string[];
  cwd?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  timeoutMs: number;
  maxOutputBytes: number;
  sandbox?: Sandbox | undefined;
}

/**
 * The sandbox of one ansible-inventory run: it writes only its private directory, and the directories holding
 * every other private directory (runs, checkouts) are hidden, except the checkout it reads its source from.
 */
export function inventorySandbox(run: ListRun) {
  if (!run.sandbox) return undefined;
  return {
    ...run.sandbox,
    hidden: [...run.sandbox.hidden, path.dirname(run.workDir), os.tmpdir()],
    writable: [run.workDir],
    readable: [...(run.cwd ? [run.cwd] : []), path.dirname(run.inventoryPath)],
  };
}

/** ansible's warnings are wrapped at 80 columns and name our temp paths: one line per message, paths hidden. */
export function ansibleMessage(stderr: string, hidePaths: Array<[string, string]>): string {
  let text = stderr.replace(/\r/g, '');
  const messages = text
    .split(/^(?=\[WARNING\]:|ERROR!|\[ERROR\]:)/m)
    .map((m) =>
      m
        .replace(/^(\[WARNING\]:|\[ERROR\]:|ERROR!)\s*(\*\s*)?/, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter(Boolean);
  text = messages.join('; ');
  for (const [from, to] of hidePaths) text = text.split(from).join(to);
  return text || 'ansible-inventory failed without a message';
}

/** The environment of an ansible CLI reading an inventory: nothing enabled but `enablePlugins`, no config but ours. */
export async function ansibleInventoryEnv(
  run: Pick<ListRun, 'workDir' | 'enablePlugins' | 'env'>,
): Promise<NodeJS.ProcessEnv> {
  // An empty ansible.cfg of our own: a config file in the working directory (a project checkout) must not
  // re-enable plugins or change paths behind our back. Environment variables win over it anyway.
  const config = path.join(run.workDir, 'ansible.cfg');
  await fs.writeFile(config, '', { mode: 0o600 });
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    HOME: run.workDir,
    // Python's tempfile: the private directory, the one place the sandbox lets it write.
    TMPDIR: run.workDir,
    ...run.env,
    ANSIBLE_CONFIG: config,
    ANSIBLE_HOME: path.join(run.workDir, 'ansible-home'),
    ANSIBLE_LOCAL_TEMP: path.join(run.workDir, 'tmp'),
    ANSIBLE_INVENTORY_ENABLED: run.enablePlugins.join(','),
    ANSIBLE_INVENTORY_UNPARSED_FAILED: 'True',
    ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED: 'True',
    ANSIBLE_NOCOLOR: 'True',
    NO_COLOR: '1',
  };
}

export async function listInventory(run: ListRun, fail: (message: string) => Error): Promise<Record<string, unknown>> {
  const env = await ansibleInventoryEnv(run);
  const hidePaths: Array<[string, string]> = [
    [run.inventoryPath, path.basename(run.inventoryPath)],
    [run.workDir + path.sep, ''],
    [run.workDir, '.'],
  ];
  const r = await runCapped('ansible-inventory', ['-i', run.inventoryPath, '--list'], {
    cwd: run.cwd ?? run.workDir,
    env,
    timeoutMs: run.timeoutMs,
    maxOutputBytes: run.maxOutputBytes,
    sandbox: inventorySandbox(run),
  });
  if (r.killedFor === 'timeout')
    throw fail(`ansible-inventory did not finish within ${Math.round(run.timeoutMs / 1000)} s`);
  if (r.killedFor === 'output-too-large') throw fail(`ansible-inventory printed more than ${run.maxOutputBytes} bytes`);
  if (r.exitCode !== 0) throw fail(ansibleMessage(r.stderr, hidePaths));
  try {
    const list: unknown = JSON.parse(r.stdout);
    if (isObject(list)) return list;
  } catch {
    // reported below
  }
  throw fail('ansible-inventory --list did not print a JSON object');
}

export async function withPrivateDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  // mkdtemp creates the directory with mode 0700: nobody else can read the content or swap the file.
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'baton-inventory-'));
  try {
    return await fn(dir);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/**
 * Parses a stored inventory. It is written to a non-executable file and only the `ini` or `yaml` plugin is
 * enabled, so a stored inventory can never run anything (no `script`, no other plugin).
 */
export async function parseInventory(opts: {
  content: string;
  timeoutMs?: number;
  maxOutputBytes?: number;
  sandbox?: Sandbox | undefined;
}): Promise<ParsedInventory> {
  const format = detectInventoryFormat(opts.content);
  return withPrivateDir(async (dir) => {
    const file = path.join(dir, `inventory${EXTENSION[format]}`);
    await fs.writeFile(file, opts.content, { mode: 0o600 });
    const list = await listInventory(
      {
        inventoryPath: file,
        workDir: dir,
        enablePlugins: [PLUGIN_FOR[format]],
        timeoutMs: opts.timeoutMs ?? DEFAULT_PARSE_TIMEOUT_MS,
        maxOutputBytes: opts.maxOutputBytes ?? DEFAULT_MAX_LIST_BYTES,
        sandbox: opts.sandbox,
      },
      (m) => new InventoryParseError(m),
    );
    return { format, list, ...summarizeInventoryList(list) };
  });
}

/** The stored form of a dynamic source's result: YAML-shaped JSON that `parseInventory` reads back without running anything. */
export function sourceInventoryFromList(list: Record<string, unknown>): SourceInventory {
  return {
    format: 'json',
    list,
    ...summarizeInventoryList(list),
    content: JSON.stringify(scriptJsonToYamlInventory(list), null, 2),
  };
}

/**
 * Runs a dynamic source (`script` or a plugin config inside a project checkout) through ansible-inventory with
 * exactly `enablePlugins` enabled, bounded by `timeoutMs` and `maxOutputBytes`.
 */
export async function runInventorySource(opts: {
  source: string;
  cwd?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  enablePlugins: string[];
  timeoutMs: number;
  maxOutputBytes: number;
  /** run the source in the bubblewrap sandbox (off by default) */
  sandbox?: Sandbox | undefined;
}): Promise<SourceInventory> {
  return withPrivateDir(async (dir) => {
    const list = await listInventory(
      {
        inventoryPath: path.resolve(opts.source),
        workDir: dir,
        enablePlugins: opts.enablePlugins,
        cwd: opts.cwd,
        env: opts.env,
        timeoutMs: opts.timeoutMs,
        maxOutputBytes: opts.maxOutputBytes,
        sandbox: opts.sandbox,
      },
      (m) => new InventorySourceError(m),
    );
    return sourceInventoryFromList(list);
  });
}
