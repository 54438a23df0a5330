import { describe, expect, it } from '@jest/globals';
import { flakyReason } from './flaky.js';
import { quantile, trendPct } from './stats.js';

const runs = (outcomes: string, playbook = 'site.yml', inventory: string | null = 'inv_a') =>
  [...outcomes].map((o, i) => ({
    run_id: `run_${playbook}_${i}`,
    outcome: o === 'F' ? 'failed' : o === 'U' ? 'unreachable' : o === 'C' ? 'changed' : 'ok',
    playbook,
    inventory_id: inventory,
  }));

describe('the flaky rule', () => {
  it('needs two flips between success and failure in one host × playbook × inventory series', () => {
    expect(flakyReason(runs('FSF'))).toContain('flipped 2 times');
    expect(flakyReason(runs('SSFF'))).toBeNull();
    // unreachable is a failure, changed a success
    expect(flakyReason(runs('UCU'))).toContain(
      'run_site.yml_1 (failed → succeeded), run_site.yml_2 (succeeded → failed)',
    );
  });

  it('needs a failure rate from 10% to 90%', () => {
    expect(flakyReason(runs('SSSSSSSSFSF'))).not.toBeNull(); // 2 of 11: 18%
    expect(flakyReason(runs('SSSSSSSSSSSSSSSSSSFSF'))).toBeNull(); // 2 of 21: under 10%
    expect(flakyReason(runs('FFFFFFFFFFFFFFFFFFSFS'))).toBeNull(); // 19 of 21: over 90%
  });

  it('judges each playbook × inventory series on its own', () => {
    const mixed = [...runs('FS', 'a.yml'), ...runs('F', 'b.yml'), ...runs('S', 'a.yml', 'inv_b')];
    expect(flakyReason(mixed)).toBeNull();
    const reason = flakyReason([...runs('SSS', 'a.yml'), ...runs('FSF', 'b.yml', null)]);
    expect(reason).toMatch(/^playbook b\.yml on an inline inventory: 2 of 3 runs failed \(67%\)/);
  });
});

describe('duration statistics', () => {
  it('interpolates quantiles and compares the halves of the window', () => {
    expect(quantile([], 0.5)).toBe(0);
    expect(quantile([4, 1, 3, 2], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 0.95)).toBe(10.5);
    expect(trendPct([1])).toBeNull();
    expect(trendPct([0, 0, 5])).toBeNull();
    expect(trendPct([1, 1, 9, 2, 2])).toBe(100);
    expect(trendPct([4, 4, 2, 2])).toBe(-50);
  });
});
