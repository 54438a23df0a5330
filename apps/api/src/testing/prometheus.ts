// Tests' view of /metrics: Prometheus's own promtool judges the exposition and PromQL, and the text is read into
// samples and metric names.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface PromtoolResult {
  status: number | null;
  /** stdout and stderr together: promtool prints its findings to either */
  output: string;
}

function promtool(args: string[], input?: string): PromtoolResult {
  const r = spawnSync('promtool', args, { input, encoding: 'utf8' });
  if (r.error) throw new Error(`promtool did not run (scripts/ensure-system.sh installs it): ${r.error.message}`);
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

/** `promtool check metrics`: the exposition's syntax and Prometheus's naming lint. */
export const checkMetrics = (exposition: string): PromtoolResult => promtool(['check', 'metrics'], exposition);

/** `promtool check rules` over one recording rule per expression: parses each as PromQL. */
export function checkExpressions(exprs: readonly string[]): PromtoolResult {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-promql-'));
  try {
    const file = path.join(dir, 'rules.yml');
    const rules = exprs.map((expr, i) => `      - record: baton:check_${i}\n        expr: ${JSON.stringify(expr)}\n`);
    fs.writeFileSync(file, `groups:\n  - name: check\n    rules:\n${rules.join('')}`);
    return promtool(['check', 'rules', file]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of an exposition (label values without escapes: ours hold none). */
export function samples(exposition: string): Sample[] {
  const out: Sample[] = [];
  for (const line of exposition.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]),
    );
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the one sample with this name and these labels (exactly); undefined when there is none. */
export function valueOf(exposition: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  return samples(exposition).find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === wanted)
    ?.value;
}

/**
 * Every series name the exposition defines, from its `# TYPE` lines: a histogram's `_bucket`, `_sum` and `_count`, a
 * summary's `_sum` and `_count`, so a metric counts even before its first sample.
 */
export function seriesNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const m of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m;
    names.add(name!);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${name}${s}`);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(`${name}${s}`);
  }
  return names;
}
