// A unified line diff computed in the browser: the longest common subsequence of lines, then hunks with a few
// lines of context around each change (long unchanged stretches fold into a "n unchanged lines" marker).

export type DiffLine = { kind: 'same' | 'add' | 'del'; text: string };
export type DiffPiece = DiffLine | { kind: 'gap'; count: number };

/** Above this many cells the LCS table costs too much: the diff shows everything removed, then everything added. */
const MAX_CELLS = 4_000_000;

export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  // A trailing newline ends the last line; it does not start an empty one.
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Every line of `before` and `after` in order: kept, removed (del) or added (add). */
export function lineDiff(before: string[], after: string[]): DiffLine[] {
  // Common head and tail first: most file diffs change a few lines in the middle.
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (
    tail < before.length - head &&
    tail < after.length - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  )
    tail++;
  const a = before.slice(head, before.length - tail);
  const b = after.slice(head, after.length - tail);
  const middle: DiffLine[] =
    a.length * b.length > MAX_CELLS
      ? [...a.map((text) => ({ kind: 'del' as const, text })), ...b.map((text) => ({ kind: 'add' as const, text }))]
      : lcsDiff(a, b);
  return [
    ...before.slice(0, head).map((text) => ({ kind: 'same' as const, text })),
    ...middle,
    ...before.slice(before.length - tail).map((text) => ({ kind: 'same' as const, text })),
  ];
}

function lcsDiff(a: string[], b: string[]): DiffLine[] {
  const n = a.length;
  const m = b.length;
  // lengths[i][j]: the LCS length of a[i..] and b[j..], in one flat array.
  const lengths = new Uint32Array((n + 1) * (m + 1));
  const at = (i: number, j: number) => i * (m + 1) + j;
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lengths[at(i, j)] =
        a[i] === b[j] ? lengths[at(i + 1, j + 1)]! + 1 : Math.max(lengths[at(i + 1, j)]!, lengths[at(i, j + 1)]!);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i]! });
      i++;
      j++;
    } else if (lengths[at(i + 1, j)]! >= lengths[at(i, j + 1)]!) out.push({ kind: 'del', text: a[i++]! });
    else out.push({ kind: 'add', text: b[j++]! });
  }
  while (i < n) out.push({ kind: 'del', text: a[i++]! });
  while (j < m) out.push({ kind: 'add', text: b[j++]! });
  return out;
}

/** The diff with unchanged stretches longer than 2 × `context` lines folded into gaps. */
export function withContext(lines: DiffLine[], context = 3): DiffPiece[] {
  const changed = lines.map((l) => l.kind !== 'same');
  const keep = lines.map((_, i) => {
    for (let d = -context; d <= context; d++) if (changed[i + d]) return true;
    return false;
  });
  const out: DiffPiece[] = [];
  let gap = 0;
  lines.forEach((l, i) => {
    if (keep[i]) {
      if (gap) out.push({ kind: 'gap', count: gap });
      gap = 0;
      out.push(l);
    } else gap++;
  });
  if (gap) out.push({ kind: 'gap', count: gap });
  return out;
}
