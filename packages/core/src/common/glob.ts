// Globs on slash-separated names (branch and tag names, playbook paths) and on host names: `**` any characters,
// `*` any characters but `/`, `?` one character but `/`; everything else literal. `release/*` matches `release/1.2`
// but not `release/1.2/hotfix`. Host names hold no `/`, so there `*` and `**` both match anything.
//
// Matching walks the glob as a set of positions (an NFA), one step per character of the name: time grows with
// glob length × name length, never exponentially. A backtracking regular expression of `*a*a*a*a*a*a*a*a*a*ab`
// takes seconds on a 40-character name and would block the event loop of every request.

type Token = { kind: 'char'; char: string } | { kind: 'star' } | { kind: 'globstar' } | { kind: 'one' };

function tokenize(glob: string): Token[] {
  const tokens: Token[] = [];
  // Code points, not UTF-16 units: `?` is one character, also outside the Basic Multilingual Plane.
  const chars = Array.from(glob);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '*' && chars[i + 1] === '*') {
      i++;
      // `***` and longer runs behave like `**`; dropping the repeats keeps the position set small.
      while (chars[i + 1] === '*') i++;
      tokens.push({ kind: 'globstar' });
    } else if (c === '*') tokens.push({ kind: 'star' });
    else if (c === '?') tokens.push({ kind: 'one' });
    else tokens.push({ kind: 'char', char: c });
  }
  return tokens;
}

/** A compiled glob: whether a whole name matches it. */
export type GlobMatcher = (name: string) => boolean;

export function compileGlob(glob: string): GlobMatcher {
  const tokens = tokenize(glob);
  const end = tokens.length;
  const isStar = (i: number) => i < end && (tokens[i]!.kind === 'star' || tokens[i]!.kind === 'globstar');
  return (name) => {
    let active = new Uint8Array(end + 1);
    let next = new Uint8Array(end + 1);
    /** Marks position i and, since a star may match nothing, every position right after a run of stars. */
    const enter = (set: Uint8Array, i: number) => {
      set[i] = 1;
      while (isStar(i)) set[++i] = 1;
    };
    enter(active, 0);
    for (const c of name) {
      next.fill(0);
      let any = false;
      for (let i = 0; i < end; i++) {
        if (!active[i]) continue;
        const t = tokens[i]!;
        if (t.kind === 'globstar' || (t.kind === 'star' && c !== '/')) {
          enter(next, i);
          any = true;
        } else if ((t.kind === 'one' && c !== '/') || (t.kind === 'char' && t.char === c)) {
          enter(next, i + 1);
          any = true;
        }
      }
      if (!any) return false;
      [active, next] = [next, active];
    }
    return active[end] === 1;
  };
}

/** Whether `name` matches the glob as a whole. */
export const matchesGlob = (name: string, glob: string): boolean => compileGlob(glob)(name);

/** A matcher for "matches any of these globs", compiled once (for checking many names against the same globs). */
export function compileGlobs(globs: readonly string[]): GlobMatcher {
  const matchers = globs.map(compileGlob);
  return (name) => matchers.some((m) => m(name));
}

export const matchesAnyGlob = (name: string, globs: readonly string[]): boolean => compileGlobs(globs)(name);

/**
 * The glob as an equivalent regular expression (`u` flag; `**` as `[^]*`, so it crosses line breaks as the matcher
 * does). For showing or for short trusted input only: a backtracking engine can take exponential time on it, so
 * matching goes through {@link compileGlob}.
 */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (const t of tokenize(glob)) {
    if (t.kind === 'globstar') re += '[^]*';
    else if (t.kind === 'star') re += '[^/]*';
    else if (t.kind === 'one') re += '[^/]';
    // Only syntax characters may be escaped under the `u` flag (`\-` is an error there); `-` is literal anyway.
    else re += t.char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'u');
}
