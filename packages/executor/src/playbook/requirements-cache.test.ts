// Pruning the Galaxy requirements cache: entries whose marker was last touched before the cut-off go (and crash
// leftovers without one), used ones stay, a dry run only counts, and a use (touch) keeps an old entry.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { pruneRequirementsCache, REQUIREMENTS_COMPLETE_MARKER, touchRequirementsEntry } from './requirements-cache.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-req-cache-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const DAY = 86_400_000;
function entry(project: string, name: string, lastUsedDaysAgo: number, complete = true): string {
  const dir = path.join(root, project, name);
  fs.mkdirSync(path.join(dir, 'roles', 'r1'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'roles', 'r1', 'main.yml'), 'x'.repeat(100));
  const at = new Date(Date.now() - lastUsedDaysAgo * DAY);
  if (complete) {
    fs.writeFileSync(path.join(dir, REQUIREMENTS_COMPLETE_MARKER), '');
    fs.utimesSync(path.join(dir, REQUIREMENTS_COMPLETE_MARKER), at, at);
  } else fs.utimesSync(dir, at, at);
  return dir;
}

describe('pruneRequirementsCache', () => {
  it('removes entries unused since the cut-off, keeps used ones, and a dry run removes nothing', async () => {
    const stale = entry('prj_a', 'hash1', 40);
    const fresh = entry('prj_a', 'hash2', 2);
    const reused = entry('prj_b', 'hash3', 40);
    const leftover = entry('prj_c', 'hash4.tmp-abc', 40, false);
    await touchRequirementsEntry(reused);
    const cutoff = new Date(Date.now() - 30 * DAY);

    const dry = await pruneRequirementsCache(root, cutoff, true);
    expect(dry.entries).toBe(2);
    expect(dry.bytes).toBeGreaterThanOrEqual(200);
    for (const d of [stale, fresh, reused, leftover]) expect(fs.existsSync(d)).toBe(true);

    const done = await pruneRequirementsCache(root, cutoff, false);
    expect(done).toEqual(dry);
    expect(fs.existsSync(stale)).toBe(false);
    expect(fs.existsSync(leftover)).toBe(false);
    expect(fs.existsSync(path.join(root, 'prj_c'))).toBe(false);
    expect(fs.existsSync(fresh)).toBe(true);
    expect(fs.existsSync(reused)).toBe(true);
    expect(fs.readdirSync(path.join(root, 'prj_a'))).toEqual(['hash2']);
  });

  it('answers nothing for a cache that does not exist yet', async () => {
    expect(await pruneRequirementsCache(path.join(root, 'absent'), new Date(), false)).toEqual({
      entries: 0,
      bytes: 0,
    });
  });
});
