// The flaky rule (written in the OpenAPI description of GET /v1/fleet too): within the window, for one host,
// playbook and inventory, the outcome flips between success (ok, changed) and failure (failed, unreachable) at
// least twice, while the failure rate of those runs is between 10% and 90%.

export interface OutcomeOfRun {
  run_id: string;
  outcome: string;
  playbook: string;
  inventory_id: string | null;
}

export const FLAKY_MIN_FLIPS = 2;
export const FLAKY_MIN_RATE = 0.1;
export const FLAKY_MAX_RATE = 0.9;

export const isFailure = (outcome: string) => outcome === 'failed' || outcome === 'unreachable';

/**
 * Why a host is flaky (null: it is not), from its runs in the window, OLDEST FIRST. The reason names the first series
 * (playbook and inventory) that qualifies and the runs where its outcome flipped.
 */
export function flakyReason(runs: readonly OutcomeOfRun[]): string | null {
  const series = new Map<string, OutcomeOfRun[]>();
  for (const r of runs) {
    const key = `${r.playbook}\n${r.inventory_id ?? ''}`;
    series.set(key, [...(series.get(key) ?? []), r]);
  }
  for (const list of series.values()) {
    const failures = list.filter((r) => isFailure(r.outcome)).length;
    const rate = failures / list.length;
    if (rate < FLAKY_MIN_RATE || rate > FLAKY_MAX_RATE) continue;
    const flips: string[] = [];
    for (let i = 1; i < list.length; i++) {
      const before = isFailure(list[i - 1]!.outcome);
      const now = isFailure(list[i]!.outcome);
      if (before !== now) flips.push(`${list[i]!.run_id} (${now ? 'succeeded → failed' : 'failed → succeeded'})`);
    }
    if (flips.length < FLAKY_MIN_FLIPS) continue;
    const first = list[0]!;
    const where = `playbook ${first.playbook} on ${first.inventory_id ? `inventory ${first.inventory_id}` : 'an inline inventory'}`;
    return `${where}: ${failures} of ${list.length} runs failed (${Math.round(rate * 100)}%), the outcome flipped ${flips.length} times: ${flips.join(', ')}`;
  }
  return null;
}
