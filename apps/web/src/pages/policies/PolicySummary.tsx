// A policy's match and approvers in words, for the list and the read-only view.
import { Badge } from '../../ui/Status';
import type { Policy } from '@baton/contracts';
import { SubjectName } from '../../ui/AccessPanel';
import { formatDuration } from '../../ui/Time';

export function MatchSummary({ policy }: { policy: Policy }) {
  const m = policy.match;
  const parts: Array<[string, string]> = [];
  if (m.projects) parts.push(['Projects', m.projects.join(', ')]);
  if (m.templates) parts.push(['Templates', m.templates.join(', ')]);
  if (m.inventories) parts.push(['Inventories', m.inventories.join(', ')]);
  if (m.playbooks) parts.push(['Playbooks', m.playbooks.join(', ')]);
  if (m.hosts) parts.push(['Hosts', m.hosts.join(', ')]);
  if (m.labels) parts.push(['Labels', m.labels.join(', ')]);
  if (m.check !== undefined) parts.push(['Check mode', m.check ? 'dry runs only' : 'real runs only']);
  if (m.origins) parts.push(['Origins', m.origins.join(', ')]);
  if (m.submitted_by_roles) parts.push(['Submitted by', m.submitted_by_roles.join(', ')]);
  if (!parts.length) return <span>every run</span>;
  return (
    <ul className="policy-summary">
      {parts.map(([k, v]) => (
        <li key={k}>
          {k}: <code>{v}</code>
        </li>
      ))}
    </ul>
  );
}

export function ApproversSummary({ policy }: { policy: Policy }) {
  const a = policy.approvers;
  const none = !a.roles && !a.users && !a.teams;
  return (
    <ul className="policy-summary">
      {none ? <li>admins only</li> : null}
      {a.roles ? <li>roles: {a.roles.join(', ')}</li> : null}
      {(a.users ?? []).map((id) => (
        <li key={id}>
          <SubjectName id={id} />
        </li>
      ))}
      {(a.teams ?? []).map((id) => (
        <li key={id}>
          <SubjectName id={id} />
        </li>
      ))}
    </ul>
  );
}

export function expiryWords(seconds: number | null): string {
  return seconds === null ? 'never' : `after ${formatDuration(seconds)}`;
}

export function EnabledBadge({ enabled }: { enabled: boolean }) {
  return (
    <Badge
      tone={enabled ? 'ok' : 'muted'}
      icon={enabled ? 'dot' : 'ring'}
      label={enabled ? 'Enabled' : 'Disabled'}
      data={{ enabled }}
    />
  );
}
