// What a dry run reported for a drifting resource. File modules report {before, after} pairs: shown as a unified
// line diff (− what the host has, + what the playbook wants; signs as well as colours). Anything else: pretty JSON.
import { lineDiff, splitLines, withContext } from './lineDiff';

interface BeforeAfter {
  before?: unknown;
  after?: unknown;
  before_header?: unknown;
  after_header?: unknown;
}

const isBeforeAfter = (v: unknown): v is BeforeAfter =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && ('before' in v || 'after' in v);

/** A side of the diff as lines: text as it is, other values as indented JSON. */
const asText = (v: unknown): string =>
  v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v, null, 2);

export function DiffView({ diff, noLog }: { diff: unknown; noLog: boolean }) {
  if (noLog)
    return (
      <p className="diff-none" data-diff="hidden">
        The diff is hidden: the task sets <code>no_log</code>.
      </p>
    );
  if (diff === null || diff === undefined)
    return (
      <p className="diff-none muted" data-diff="none">
        The module reported no diff.
      </p>
    );
  const parts = Array.isArray(diff) ? diff : [diff];
  if (parts.length > 0 && parts.every(isBeforeAfter))
    return (
      <>
        {parts.map((p, i) => (
          <FileDiff key={i} part={p} />
        ))}
      </>
    );
  return (
    <pre className="diff-json" data-diff="json">
      {JSON.stringify(diff, null, 2)}
    </pre>
  );
}

/** Ansible names the desired side after the temporary file it rendered: no name a reader can use. */
const TEMPORARY = /ansible-(local|tmp)-|^\/?tmp\/tmp/;

/** What a side's header says: the header ansible gave (a path, usually), unless it is a temporary file. */
function sideName(header: unknown): string {
  const text = asText(header);
  return text && !TEMPORARY.test(text) ? `: ${text}` : '';
}

function FileDiff({ part }: { part: BeforeAfter }) {
  const before = asText(part.before);
  const lines = lineDiff(splitLines(before), splitLines(asText(part.after)));
  const pieces = withContext(lines);
  const changed = lines.some((l) => l.kind !== 'same');
  return (
    <div className="diff" data-diff="lines">
      <div className="diff-header diff-del">
        <span aria-hidden="true">--- </span>actual{sideName(part.before_header)}
        {before === '' ? ' (empty or absent)' : ''}
      </div>
      <div className="diff-header diff-add">
        <span aria-hidden="true">+++ </span>desired{sideName(part.after_header)}
      </div>
      {changed ? (
        <pre className="diff-body">
          {pieces.map((p, i) =>
            p.kind === 'gap' ? (
              <span key={i} className="diff-line diff-gap">
                {`⋯ ${p.count} unchanged line${p.count === 1 ? '' : 's'}\n`}
              </span>
            ) : (
              <span key={i} className={`diff-line diff-${p.kind}`} data-line={p.kind}>
                <span className="diff-sign">{p.kind === 'add' ? '+' : p.kind === 'del' ? '-' : ' '}</span>
                {` ${p.text}\n`}
              </span>
            ),
          )}
        </pre>
      ) : (
        <p className="diff-none muted">No line differs (the change is in the file&apos;s attributes or state).</p>
      )}
    </div>
  );
}
