// deploy/grafana/baton.json (issue 14, "Metrics"): a dashboard Grafana can load, whose every query parses as PromQL
// (promtool) and names only metrics a real /metrics serves, so it cannot drift from the code. On SQLite and PostgreSQL.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DIALECTS } from '@baton/db/testing';
import { createHarness, type Harness } from '../apps/api/src/testing/harness.js';
import { checkExpressions, seriesNames } from '../apps/api/src/testing/prometheus.js';

interface Target {
  expr?: unknown;
  refId?: unknown;
  datasource?: { type?: unknown; uid?: unknown };
}
interface Panel {
  id?: unknown;
  type?: unknown;
  title?: unknown;
  gridPos?: { x?: unknown; y?: unknown; w?: unknown; h?: unknown };
  datasource?: { type?: unknown; uid?: unknown };
  targets?: Target[];
}
interface Dashboard {
  uid?: unknown;
  title?: unknown;
  schemaVersion?: unknown;
  panels?: Panel[];
  templating?: { list?: Array<{ name?: unknown; type?: unknown; query?: unknown }> };
}

const dashboard = JSON.parse(fs.readFileSync(path.resolve('deploy/grafana/baton.json'), 'utf8')) as Dashboard;
const panels = dashboard.panels ?? [];
const queried = panels.filter((p) => p.type !== 'row');
const exprs = queried.flatMap((p) => (p.targets ?? []).map((t) => String(t.expr)));

/** An expression as Prometheus gets it: Grafana's variables filled in. */
const asPromQl = (expr: string) =>
  expr.replace(/\$__rate_interval|\$__interval|\$__range/g, '5m').replace(/\$job\b/g, 'baton');

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
]);

/** Names of the series an expression reads: identifiers not followed by `(` and not PromQL keywords, labels or units. */
function metricNamesIn(expr: string): string[] {
  const withoutStrings = expr.replace(/"[^"]*"/g, '""');
  const withoutLabelSets = withoutStrings
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\b(by|without|on|ignoring|group_left|group_right) *\([^)]*\)/g, '');
  const withoutRanges = withoutLabelSets.replace(/\[[^\]]*\]/g, '[]');
  return [...withoutRanges.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?! *\()/g)]
    .map((m) => m[1]!)
    .filter((name) => !KEYWORDS.has(name));
}

describe('the Grafana dashboard', () => {
  it('has what Grafana needs to load it: uid, title, schema version, a Prometheus data source variable', () => {
    expect(dashboard).toMatchObject({ uid: 'baton-overview', title: 'Baton' });
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.templating?.list).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
      ]),
    );
  });

  it('gives every panel a unique id, a type, a title and a place on the 24-column grid, without overlaps', () => {
    expect(panels.length).toBeGreaterThan(10);
    const ids = panels.map((p) => p.id);
    expect(ids.every((id) => Number.isInteger(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    for (const p of panels) {
      expect(typeof p.type).toBe('string');
      expect(typeof p.title).toBe('string');
      const { x, y, w, h } = p.gridPos ?? {};
      for (const n of [x, y, w, h]) expect(Number.isInteger(n)).toBe(true);
      expect((x as number) + (w as number)).toBeLessThanOrEqual(24);
      for (let i = x as number; i < (x as number) + (w as number); i++)
        for (let j = y as number; j < (y as number) + (h as number); j++) {
          expect({ panel: p.title, cell: `${i},${j}`, free: !cells.has(`${i},${j}`) }).toMatchObject({ free: true });
          cells.add(`${i},${j}`);
        }
    }
  });

  it('queries the chosen Prometheus data source with an expression per target', () => {
    for (const p of queried) {
      expect(p.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets?.length).toBeGreaterThan(0);
      const refIds = p.targets!.map((t) => t.refId);
      expect(new Set(refIds).size).toBe(refIds.length);
      for (const t of p.targets!) {
        expect(typeof t.expr).toBe('string');
        expect(t.datasource).toEqual(p.datasource);
        // Only the variables asPromQl fills in.
        expect(asPromQl(String(t.expr))).not.toContain('$');
      }
    }
  });

  it('writes only expressions promtool parses as PromQL', () => {
    expect(checkExpressions(exprs.map(asPromQl))).toMatchObject({ status: 0 });
    // The check can fail: a broken expression is named.
    const broken = checkExpressions(['sum(rate(baton_runs_finished_total[5m])']);
    expect(broken.status).not.toBe(0);
    expect(broken.output).toMatch(/parse error|unclosed/i);
  });

  it('reads these metric names out of expressions', () => {
    expect(
      metricNamesIn(
        'histogram_quantile(0.95, sum by (le, route) (rate(baton_x_bucket{job="$job",a="b"}[$__rate_interval])))',
      ),
    ).toEqual(['baton_x_bucket']);
    expect(metricNamesIn('max(a_b{x="y"}) / ignoring(z) c_d')).toEqual(['a_b', 'c_d']);
  });
});

describe.each(DIALECTS)('the Grafana dashboard against /metrics on %s', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect);
  });
  afterAll(async () => {
    await h.close();
  });

  it('uses only metrics the server serves', async () => {
    const res = await h.http.get('/metrics');
    expect(res.status).toBe(200);
    const served = seriesNames(res.text);
    const used = new Set(exprs.flatMap((e) => metricNamesIn(asPromQl(e))));
    expect(used.size).toBeGreaterThan(10);
    expect([...used].filter((name) => !served.has(name))).toEqual([]);
    // And every Baton metric is on the dashboard (a histogram by its buckets), the process metrics aside.
    const ours = [...served].filter((n) => !/^baton_(process|nodejs)_/.test(n) && !/_(bucket|sum|count)$/.test(n));
    const shown = (name: string) => used.has(name) || used.has(`${name}_bucket`);
    expect(ours.filter((name) => !shown(name))).toEqual(['baton_audit_entries']);
  });
});
