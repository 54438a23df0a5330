// A source's last refresh result in the look of every other status badge.
import { Badge } from '../../ui/Status';
import type { InventorySource } from '../projects/types';

export function RefreshBadge({ source }: { source: InventorySource }) {
  const [tone, icon, word] = source.last_error
    ? (['bad', 'cross', 'Failed'] as const)
    : source.refreshed_at
      ? (['ok', 'check', 'Refreshed'] as const)
      : (['muted', 'ring', 'Never refreshed'] as const);
  return (
    <Badge
      tone={tone}
      icon={icon}
      label={word}
      title={source.last_error ?? undefined}
      data={{ refresh: word.toLowerCase() }}
    />
  );
}
