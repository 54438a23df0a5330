// The log: virtualized (only the rows on screen exist in the DOM, so 200,000 lines scroll like 20), line numbers
// that link to `#L<n>`, search with next/previous and a count, following the tail while live, and a raw download.
import type { Run } from '@baton/contracts';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { AnsiLine } from './ansi';
import { DownloadLogButton } from './DownloadLogButton';
import { LogSearch, useLogSearch } from './LogSearch';
import type { RunLog } from './useRunLog';

const ROW_PX = 18;

/** The line a `#L<n>` address points at. */
function lineFromHash(hash: string): number | null {
  const m = /^#L(\d{1,9})$/.exec(hash);
  return m ? Number(m[1]) : null;
}

const STATE_WORDS: Record<RunLog['state'], string> = {
  loading: 'Loading…',
  live: 'Live',
  reconnecting: 'Connection lost: reconnecting…',
  complete: 'Complete',
  error: 'Error',
};

export function LogViewer({ run, log }: { run: Run; log: RunLog }) {
  const { lines, version, state } = log;
  const count = lines.count;
  const scroller = useRef<HTMLDivElement>(null);
  const [target, setTarget] = useState<number | null>(() => lineFromHash(window.location.hash));
  const [following, setFollowing] = useState(() => target === null && run.status !== 'finished');
  const live = state === 'live' || state === 'reconnecting';
  const search = useLogSearch(lines, version);

  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_PX,
    overscan: 30,
  });

  // A linked line: scroll to it once it has arrived (a long log may still be loading).
  const scrolledTo = useRef<number | null>(null);
  useEffect(() => {
    if (target === null || target > count || scrolledTo.current === target) return;
    scrolledTo.current = target;
    setFollowing(false);
    virtualizer.scrollToIndex(target - 1, { align: 'center' });
  }, [target, count, virtualizer]);
  useEffect(() => {
    const onHash = () => {
      const n = lineFromHash(window.location.hash);
      scrolledTo.current = null;
      setTarget(n);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  // Following the tail: each new line scrolls to the end; scrolling up stops it (the button resumes it).
  const programmatic = useRef(false);
  useLayoutEffect(() => {
    if (!following || count === 0) return;
    programmatic.current = true;
    virtualizer.scrollToIndex(count - 1, { align: 'end' });
  }, [following, count, version, virtualizer]);
  const onScroll = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    if (programmatic.current) {
      programmatic.current = false;
      return;
    }
    const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - ROW_PX * 2;
    if (!atEnd && following) setFollowing(false);
  }, [following]);

  const goTo = useCallback(
    (n: number) => {
      setFollowing(false);
      virtualizer.scrollToIndex(n - 1, { align: 'center' });
    },
    [virtualizer],
  );

  const link = (n: number) => (e: React.MouseEvent) => {
    e.preventDefault();
    history.replaceState(history.state, '', `#L${n}`);
    scrolledTo.current = n;
    setTarget(n);
  };

  const current = search.current;
  const matchSet = useMemo(() => new Set(search.matches), [search.matches]);

  return (
    <section className="log-section" aria-labelledby="log-heading">
      <div className="log-toolbar">
        <h2 id="log-heading">Log</h2>
        <span className={`log-state log-state-${state}`} role="status" data-testid="log-state">
          {STATE_WORDS[state]}
          {state === 'error' && log.error ? `: ${log.error}` : ''}
          <span className="muted"> · {count.toLocaleString()} lines</span>
        </span>
        <LogSearch search={search} onGo={goTo} />
        {live ? (
          <button
            type="button"
            className="btn btn-small"
            aria-pressed={following}
            onClick={() => setFollowing((f) => !f)}
          >
            {following ? 'Stop following' : 'Follow log'}
          </button>
        ) : null}
        <DownloadLogButton runId={run.id} />
      </div>
      {count === 0 ? (
        <div className="log log-empty muted">
          {state === 'loading' ? 'Loading the log…' : live ? 'Waiting for output…' : 'This run printed nothing.'}
        </div>
      ) : null}
      <div
        ref={scroller}
        className="log log-scroller"
        hidden={count === 0}
        tabIndex={0}
        role="region"
        aria-label={`Log of run ${run.id}, ${count} lines`}
        onScroll={onScroll}
        data-testid="log"
      >
        <div className="log-canvas" style={{ height: virtualizer.getTotalSize() }}>
          {virtualizer.getVirtualItems().map((row) => {
            const n = row.index + 1;
            const classes = ['log-line'];
            if (n === target) classes.push('log-line-target');
            if (matchSet.has(n)) classes.push(n === current ? 'log-line-current' : 'log-line-match');
            return (
              <div
                key={row.key}
                className={classes.join(' ')}
                data-line={n}
                style={{ transform: `translateY(${row.start}px)` }}
              >
                <a className="log-ln" href={`#L${n}`} onClick={link(n)} aria-label={`Line ${n}`}>
                  {n}
                </a>
                <span className="log-text">
                  <AnsiLine text={lines.line(n)} />
                </span>
              </div>
            );
          })}
        </div>
      </div>
    </section>
  );
}
