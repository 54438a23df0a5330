// Splitting a run across shards (ARCHITECTURE.md, "Shards"): the hosts a run targets after `--limit`, by
// ansible's own pattern rules, and an inventory of only some of them for each shard.
import fs from 'node:fs/promises';
import path from 'node:path';
import { runCapped } from '../process/capped-process.js';
import {
  ansibleInventoryEnv,
  ansibleMessage,
  DEFAULT_MAX_LIST_BYTES,
  DEFAULT_PARSE_TIMEOUT_MS,
  detectInventoryFormat,
  EXTENSION,
  InventoryParseError,
  inventorySandbox,
  type ListRun,
  listInventory,
  PLUGIN_FOR,
  scriptJsonToYamlInventory,
  summarizeInventoryList,
  withPrivateDir,
} from './ansible-inventory.js';
import { HostPatternError } from '@baton/contracts';
import type { Sandbox } from '../sandbox/sandbox.js';

/** Declared in contracts, so core can match it with instanceof. */
export { HostPatternError };

export interface InventoryHosts {
  /** the hosts after the limit, sorted by name */
  hosts: string[];
  /** the whole inventory as `ansible-inventory --list` prints it (hostvars merged per host) */
  list: Record<string, unknown>;
}

/**
 * `@file` in a limit makes ansible read host names from a file on this server (and print unmatched lines in
 * warnings): refused, wherever it stands among the comma- or colon-separated parts.
 */
export function hostLimitProblem(limit: string): string | undefined {
  return /(^|[,:])\s*@/.test(limit) ? 'must not read hosts from a file (@…)' : undefined;
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const NO_HOSTS = /no hosts to target|No hosts matched/;

/** `ansible all --list-hosts --limit=…` over the inventory file: nothing runs, ansible only matches patterns. */
async function hostsMatching(run: ListRun, limit: string, known: Set<string>): Promise<string[]> {
  const env = await ansibleInventoryEnv(run);
  const r = await runCapped('ansible', ['all', '-i', run.inventoryPath, '--list-hosts', `--limit=${limit}`], {
    cwd: run.workDir,
    env,
    timeoutMs: run.timeoutMs,
    maxOutputBytes: run.maxOutputBytes,
    sandbox: inventorySandbox(run),
  });
  if (r.killedFor === 'timeout')
    throw new HostPatternError(`ansible did not match the limit within ${Math.round(run.timeoutMs / 1000)} s`);
  if (r.killedFor === 'output-too-large')
    throw new HostPatternError(`ansible printed more than ${run.maxOutputBytes} bytes`);
  if (r.exitCode !== 0) {
    if (NO_HOSTS.test(r.stderr)) return [];
    throw new HostPatternError(
      ansibleMessage(r.stderr, [
        [run.inventoryPath, path.basename(run.inventoryPath)],
        [run.workDir + path.sep, ''],
        [run.workDir, '.'],
      ]),
    );
  }
  // "  hosts (2):" then one host per line.
  const hosts = r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^hosts \(\d+\):$/.test(l));
  const strange = hosts.filter((h) => !known.has(h));
  if (strange.length)
    throw new HostPatternError(`ansible matched hosts the inventory does not list: ${strange.join(', ')}`);
  return hosts;
}

/**
 * The hosts of a stored inventory that `limit` (an ansible `--limit` pattern) selects, sorted by name, and the
 * inventory's `--list`. Same hardened setup as parseInventory: a private file, only the ini or yaml plugin.
 * Content ansible refuses → InventoryParseError; a limit it refuses → HostPatternError. `sandbox` as for parseInventory.
 */
export async function inventoryHosts(opts: {
  content: string;
  limit?: string | undefined;
  timeoutMs?: number;
  maxOutputBytes?: number;
  sandbox?: Sandbox | undefined;
}): Promise<InventoryHosts> {
  const limitProblem = opts.limit === undefined ? undefined : hostLimitProblem(opts.limit);
  if (limitProblem) throw new HostPatternError(`the limit ${limitProblem}`);
  const format = detectInventoryFormat(opts.content);
  return withPrivateDir(async (dir) => {
    const file = path.join(dir, `inventory${EXTENSION[format]}`);
    await fs.writeFile(file, opts.content, { mode: 0o600 });
    const run: ListRun = {
      inventoryPath: file,
      workDir: dir,
      enablePlugins: [PLUGIN_FOR[format]],
      timeoutMs: opts.timeoutMs ?? DEFAULT_PARSE_TIMEOUT_MS,
      maxOutputBytes: opts.maxOutputBytes ?? DEFAULT_MAX_LIST_BYTES,
      sandbox: opts.sandbox,
    };
    const list = await listInventory(run, (m) => new InventoryParseError(m));
    const all = summarizeInventoryList(list).hosts.map((h) => h.name);
    const hosts = opts.limit === undefined ? all : await hostsMatching(run, opts.limit, new Set(all));
    return { hosts: [...new Set(hosts)].sort(byName), list };
  });
}

/**
 * An inventory of only `hosts`, each with its merged hostvars, in every group it belonged to (so plays that
 * target a group still match), from a `--list` document. The text is JSON, which ansible's yaml plugin reads
 * through its JSON decoder: vaulted and `!unsafe` values keep the markers `--list` gave them.
 */
export function inventoryForHosts(list: Record<string, unknown>, hosts: string[]): string {
  const known = new Set(summarizeInventoryList(list).hosts.map((h) => h.name));
  const unknown = hosts.filter((h) => !known.has(h));
  if (unknown.length) throw new InventoryParseError(`not hosts of this inventory: ${unknown.join(', ')}`);
  const wanted = new Set(hosts);
  const meta = list._meta;
  const hostvars = isObject(meta) && isObject(meta.hostvars) ? meta.hostvars : {};
  const narrowed: Record<string, unknown> = {
    _meta: { hostvars: Object.fromEntries(Object.entries(hostvars).filter(([h]) => wanted.has(h))) },
  };
  for (const [name, group] of Object.entries(list)) {
    if (name === '_meta' || !isObject(group)) continue;
    const groupHosts = Array.isArray(group.hosts)
      ? group.hosts.filter((h): h is string => typeof h === 'string' && wanted.has(h))
      : [];
    narrowed[name] = {
      ...(groupHosts.length ? { hosts: groupHosts } : {}),
      ...(Array.isArray(group.children) ? { children: group.children } : {}),
    };
  }
  return `${JSON.stringify(scriptJsonToYamlInventory(narrowed), null, 2)}\n`;
}
