// Search within the log: every line containing the text (case-insensitive, colours ignored), a count, and
// next/previous that scroll to the match. Live lines are searched as they arrive (only the new ones).
import { useEffect, useId, useRef, useState } from 'react';
import { plainText } from './ansi';
import type { LogLines } from './logLines';

export interface LogSearchState {
  query: string;
  setQuery(q: string): void;
  matches: number[];
  /** the line of the current match */
  current: number | null;
  step(dir: 1 | -1): number | null;
}

export function useLogSearch(lines: LogLines, version: number): LogSearchState {
  const [query, setQuery] = useState('');
  const [matches, setMatches] = useState<number[]>([]);
  const [index, setIndex] = useState(-1);
  const scanned = useRef({ needle: '', upTo: 0 });

  useEffect(() => {
    const needle = query.trim().toLowerCase();
    const seen = scanned.current;
    if (!needle) {
      scanned.current = { needle: '', upTo: 0 };
      setMatches([]);
      setIndex(-1);
      return;
    }
    if (seen.needle === needle) {
      if (lines.count <= seen.upTo) return;
      const more = lines.find(needle, seen.upTo + 1, plainText);
      scanned.current = { needle, upTo: lines.count };
      if (more.length) setMatches((m) => [...m, ...more]);
      return;
    }
    scanned.current = { needle, upTo: lines.count };
    setMatches(lines.find(needle, 1, plainText));
    setIndex(-1);
  }, [query, version, lines]);

  return {
    query,
    setQuery,
    matches,
    current: index >= 0 ? (matches[index] ?? null) : null,
    step(dir) {
      if (matches.length === 0) return null;
      const next = index < 0 ? (dir === 1 ? 0 : matches.length - 1) : (index + dir + matches.length) % matches.length;
      setIndex(next);
      return matches[next] ?? null;
    },
  };
}

export function LogSearch({ search, onGo }: { search: LogSearchState; onGo(line: number): void }) {
  const id = useId();
  const [draft, setDraft] = useState('');
  // Typing settles before a 200,000-line scan starts.
  useEffect(() => {
    const t = setTimeout(() => search.setQuery(draft), 200);
    return () => clearTimeout(t);
  }, [draft]);
  const go = (dir: 1 | -1) => {
    if (draft !== search.query) search.setQuery(draft);
    const n = search.step(dir);
    if (n !== null) onGo(n);
  };
  const { matches, current } = search;
  const position = current === null ? 0 : matches.indexOf(current) + 1;
  return (
    <form
      className="log-search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        go(1);
      }}
    >
      <label htmlFor={`${id}-q`} className="visually-hidden">
        Search the log
      </label>
      <input
        id={`${id}-q`}
        type="search"
        placeholder="Search the log"
        value={draft}
        onChange={(e) => setDraft(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && e.shiftKey) {
            e.preventDefault();
            go(-1);
          }
        }}
      />
      <span className="log-search-count" role="status" aria-live="polite" data-testid="search-count">
        {search.query.trim() ? `${position ? `${position} of ` : ''}${matches.length} matches` : ''}
      </span>
      <button type="button" className="btn btn-small" onClick={() => go(-1)} disabled={!matches.length}>
        Previous match
      </button>
      <button type="submit" className="btn btn-small" disabled={!matches.length && draft === search.query}>
        Next match
      </button>
    </form>
  );
}
