// Readers for the files in deploy/: the Dockerfile's instructions per stage, the YAML documents, and the names of
// the settings the code really reads, so test/deploy-manifests.test.ts can hold the files to the code.
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { fullPath } from '../../apps/api/src/http/registry.js';
import { systemRoutes } from '../../apps/api/src/system/system.routes.js';

export const REPO = path.resolve(import.meta.dirname ?? '.', '../..');
export const DEPLOY = path.join(REPO, 'deploy');

export interface DockerInstruction {
  keyword: string;
  args: string;
}
export interface DockerStage {
  name: string;
  base: string;
  instructions: DockerInstruction[];
}

/** The Dockerfile as stages of instructions; continuation lines joined, comments dropped. */
export function readDockerfile(file: string): DockerStage[] {
  const lines = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => !/^\s*#/.test(l));
  const joined = lines.join('\n').replace(/\\\n/g, ' ');
  const stages: DockerStage[] = [];
  for (const line of joined.split('\n')) {
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const keyword = m[1]!.toUpperCase();
    const args = m[2]!.trim().replace(/\s+/g, ' ');
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      stages.push({ base: from?.[1] ?? args, name: from?.[2] ?? String(stages.length), instructions: [] });
    } else if (stages.length > 0) {
      stages.at(-1)!.instructions.push({ keyword, args });
    }
  }
  return stages;
}

/**
 * Every YAML document of a file (a manifest file may hold several, separated by `---`). Read as YAML 1.1, as
 * Kubernetes and Docker Compose read them: `mode: 0400` is octal there.
 */
export function readYamlDocuments(file: string): unknown[] {
  return parseAllDocuments(fs.readFileSync(file, 'utf8'), { version: '1.1' }).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
    return doc.toJS({ maxAliasCount: 100 }) as unknown;
  });
}

const settingNames = (files: string[]): Set<string> =>
  new Set(files.flatMap((f) => fs.readFileSync(f, 'utf8').match(/\bBATON_[A-Z0-9_]+\b/g) ?? []));

/** The variables `baton serve` reads: every BATON_* name its config modules mention. */
export function apiSettingNames(): Set<string> {
  const dir = path.join(REPO, 'apps/api/src/config');
  return settingNames(
    fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => path.join(dir, f)),
  );
}

/** The variables `baton worker` reads. */
export function workerSettingNames(): Set<string> {
  return settingNames([path.join(REPO, 'apps/worker/src/config.ts')]);
}

/** The public, unauthenticated GET paths a probe may use (/healthz, /readyz…), from the API's own route list. */
export function probePaths(): Set<string> {
  const ops = systemRoutes({
    ping: async () => {},
    metrics: {} as Parameters<typeof systemRoutes>[0]['metrics'],
    openapi: () => ({}),
  });
  return new Set(ops.filter((op) => op.method === 'get' && op.auth === 'public').map(fullPath));
}

/** The workspace's package manifests (apps/*, packages/*), relative to the repository. */
export function workspaceManifests(): string[] {
  return ['apps', 'packages'].flatMap((top) =>
    fs
      .readdirSync(path.join(REPO, top))
      .map((d) => `${top}/${d}/package.json`)
      .filter((f) => fs.existsSync(path.join(REPO, f))),
  );
}

/** A file mode as compose and Kubernetes write it (YAML may read 0400 as octal 256 or as the string "0400"). */
export function fileMode(mode: unknown): number | undefined {
  if (typeof mode === 'number') return mode;
  if (typeof mode === 'string' && /^0?[0-7]{3}$/.test(mode)) return parseInt(mode, 8);
  return undefined;
}
