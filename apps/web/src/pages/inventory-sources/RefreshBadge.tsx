// A source's last refresh result in the look of every other status badge.
import type { InventorySource } from '../projects/types';

export function RefreshBadge({ source }: { source: InventorySource }) {
  const [tone, icon, word] = source.last_error
    ? ['bad', '✕', 'Failed']
    : source.refreshed_at
      ? ['ok', '✓', 'Refreshed']
      : ['muted', '○', 'Never refreshed'];
  return (
    <span className={`status status-${tone}`} data-refresh={word.toLowerCase()} title={source.last_error ?? undefined}>
      <span className="status-icon" aria-hidden="true">
        {icon}
      </span>
      {word}
    </span>
  );
}
