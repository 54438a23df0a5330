// bench/analytics: sequential HTTP requests against the in-process server, and the figures they give.
import http from 'node:http';

/** GET path with the bearer token; resolves with the status and the raw body once it has all arrived. */
export function get(
  port: number,
  token: string,
  path: string,
  agent: http.Agent | false = false,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent, headers: { Authorization: `Bearer ${token}` } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** The q-quantile (0–1) by nearest rank. */
export function percentile(sortedMs: readonly number[], q: number): number {
  return sortedMs[Math.min(sortedMs.length - 1, Math.max(0, Math.ceil(q * sortedMs.length) - 1))]!;
}

export interface Timing {
  p50: number;
  p99: number;
  max: number;
}

export interface Series {
  /** names the series in the results */
  name: string;
  token: string;
  path: string;
}

/**
 * `samples` timed requests per series, one at a time, the series taking turns (request 1 of each, then 2 of each…)
 * after `warmup` untimed rounds: a burst of other work on the machine then lands on every series a little, not on
 * one series a lot. Each series keeps one connection alive, as a browser would. Every answer must be a 200.
 */
export async function timeRoundRobin(
  port: number,
  series: readonly Series[],
  samples: number,
  warmup: number,
): Promise<Map<string, Timing>> {
  const agents = series.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const ms = series.map((): number[] => []);
  try {
    for (let round = 0; round < warmup + samples; round++)
      for (const [i, s] of series.entries()) {
        const t0 = performance.now();
        const res = await get(port, s.token, s.path, agents[i]);
        const took = performance.now() - t0;
        if (res.status !== 200) throw new Error(`GET ${s.path} answered ${res.status}: ${res.body.slice(0, 300)}`);
        if (round >= warmup) ms[i]!.push(took);
      }
  } finally {
    for (const a of agents) a.destroy();
  }
  return new Map(
    series.map((s, i) => {
      const sorted = ms[i]!.sort((a, b) => a - b);
      return [s.name, { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1]! }];
    }),
  );
}

const fmt = (ms: number) => (ms < 10 ? ms.toFixed(1) : Math.round(ms).toString());

export interface Row {
  endpoint: string;
  caller: string;
  small: Timing;
  large: Timing;
}

/** The table of one database: p50/p99 at both sizes, the p99 ratio, and the verdict against the targets. */
export function table(
  rows: readonly Row[],
  sizes: { small: number; large: number },
  limits: { p99Ms: number; ratio: number },
) {
  const k = (n: number) => (n >= 1000 ? `${n / 1000}k` : String(n));
  const out = [
    `| endpoint | caller | p50 / p99 at ${k(sizes.small)} runs | p50 / p99 at ${k(sizes.large)} runs | p99 ratio | verdict |`,
    '|---|---|---|---|---|---|',
  ];
  let pass = true;
  for (const r of rows) {
    const ratio = r.large.p99 / r.small.p99;
    const ok = r.large.p99 < limits.p99Ms && ratio < limits.ratio;
    pass &&= ok;
    out.push(
      `| ${r.endpoint} | ${r.caller} | ${fmt(r.small.p50)} / ${fmt(r.small.p99)} ms | ${fmt(r.large.p50)} / ${fmt(r.large.p99)} ms | ${ratio.toFixed(2)}× | ${ok ? 'PASS' : 'FAIL'} |`,
    );
  }
  return { text: out.join('\n'), pass };
}
