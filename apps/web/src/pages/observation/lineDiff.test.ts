// The drift page's line diff: both sides come back out of it, changes are minimal, and long unchanged stretches fold.
import { describe, expect, it } from '@jest/globals';
import { type DiffLine, lineDiff, splitLines, withContext } from './lineDiff';

const sides = (d: DiffLine[]) => ({
  before: d.filter((l) => l.kind !== 'add').map((l) => l.text),
  after: d.filter((l) => l.kind !== 'del').map((l) => l.text),
});
const render = (d: Array<DiffLine | { kind: 'gap'; count: number }>) =>
  d.map((l) =>
    l.kind === 'gap' ? `~${l.count}` : `${l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : ' '}${l.text}`,
  );

describe('lineDiff', () => {
  it('marks one changed line among kept ones', () => {
    const d = lineDiff(splitLines('one\nactual\nthree\n'), splitLines('one\ndesired\nthree\n'));
    expect(render(d)).toEqual([' one', '-actual', '+desired', ' three']);
  });

  it('finds the longest common run of lines, not just head and tail', () => {
    const before = ['a', 'b', 'c', 'd', 'e', 'f'];
    const after = ['x', 'b', 'c', 'y', 'e', 'f', 'z'];
    const d = lineDiff(before, after);
    expect(sides(d)).toEqual({ before, after });
    expect(d.filter((l) => l.kind === 'same').map((l) => l.text)).toEqual(['b', 'c', 'e', 'f']);
  });

  it('handles empty sides (a missing file, a removed one) and a missing final newline', () => {
    expect(render(lineDiff([], splitLines('beta\n')))).toEqual(['+beta']);
    expect(render(lineDiff(splitLines('gone\n'), []))).toEqual(['-gone']);
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a\r\nb')).toEqual(['a', 'b']);
  });

  it('falls back to remove-all/add-all past its size limit, still giving both sides back', () => {
    const before = Array.from({ length: 2500 }, (_, i) => `old ${i}`);
    const after = Array.from({ length: 2500 }, (_, i) => `new ${i}`);
    const d = lineDiff(['head', ...before, 'tail'], ['head', ...after, 'tail']);
    expect(sides(d)).toEqual({ before: ['head', ...before, 'tail'], after: ['head', ...after, 'tail'] });
    expect(d[0]).toEqual({ kind: 'same', text: 'head' });
    expect(d[1]).toEqual({ kind: 'del', text: 'old 0' });
  });
});

describe('withContext', () => {
  it('keeps three lines around each change and folds the rest', () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i}`);
    const after = [...before];
    after[10] = 'changed';
    expect(render(withContext(lineDiff(before, after)))).toEqual([
      '~7',
      ' l7',
      ' l8',
      ' l9',
      '-l10',
      '+changed',
      ' l11',
      ' l12',
      ' l13',
      '~6',
    ]);
  });

  it('folds nothing when every line is near a change', () => {
    expect(render(withContext(lineDiff(['a', 'b'], ['a', 'c'])))).toEqual([' a', '-b', '+c']);
  });
});
