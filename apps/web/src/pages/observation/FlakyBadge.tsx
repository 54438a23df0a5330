// The "flaky" flag of a host: a badge that opens to say which runs flipped (and carries it as its tooltip).
import { Badge } from '../../ui/Status';

export function FlakyBadge({ reason }: { reason: string | null }) {
  if (!reason) return <Badge tone="warn" icon="triangle" label="Flaky" data={{ flaky: true }} />;
  return (
    <details className="flaky" data-flaky="true">
      <summary title={reason}>
        <Badge tone="warn" icon="triangle" label="Flaky" />
        <span className="visually-hidden"> (show why)</span>
      </summary>
      <p className="flaky-reason">{reason}</p>
    </details>
  );
}
