// The left navigation: AWX and Semaphore words where Baton's concept is the same.
import type { Role } from '@baton/contracts';
import { useHasRole } from '../auth/auth';
import { useAiConfigured } from '../pages/ai/useAiStatus';

export interface NavItem {
  path: string;
  label: string;
  /** the least role that sees the entry (the API decides what each role may do; this only hides dead ends) */
  role?: Role;
  /** shown only while the feature is on (`ai`: an AI provider is configured, GET /v1/ai/status) */
  needs?: 'ai';
}

export const NAV: Array<{ section: string; items: NavItem[] }> = [
  {
    section: 'Runs',
    items: [
      { path: '/runs', label: 'Runs' },
      { path: '/approvals', label: 'Approvals' },
    ],
  },
  {
    section: 'Observe',
    items: [
      { path: '/fleet', label: 'Fleet' },
      { path: '/tasks', label: 'Tasks' },
      { path: '/drift', label: 'Drift' },
    ],
  },
  {
    section: 'Launch',
    items: [
      { path: '/templates', label: 'Templates' },
      { path: '/pipelines', label: 'Pipelines' },
      { path: '/schedules', label: 'Schedules' },
      { path: '/triggers', label: 'Triggers' },
      { path: '/notifiers', label: 'Notifications' },
    ],
  },
  {
    section: 'Inputs',
    items: [
      { path: '/projects', label: 'Projects' },
      { path: '/inventories', label: 'Inventories' },
      { path: '/inventory-sources', label: 'Inventory sources' },
      { path: '/credentials', label: 'Credentials' },
      { path: '/import', label: 'Import', role: 'admin' },
    ],
  },
  {
    section: 'AI',
    items: [
      { path: '/ai/draft', label: 'Draft a script', role: 'operator', needs: 'ai' },
      { path: '/ai/propose', label: 'Propose a run', role: 'operator', needs: 'ai' },
      // Always there for admins: it is where the AI helpers are turned on.
      { path: '/settings/ai', label: 'AI settings', role: 'admin' },
    ],
  },
  {
    section: 'Governance',
    items: [
      { path: '/policies', label: 'Policies', role: 'operator' },
      { path: '/users', label: 'Users' },
      { path: '/teams', label: 'Teams' },
      { path: '/grants', label: 'Grants' },
      { path: '/tokens', label: 'API tokens' },
      { path: '/audit', label: 'Audit trail', role: 'admin' },
      { path: '/workers', label: 'Workers' },
    ],
  },
];

/** Whether an entry shows for the signed-in user: their role suffices and the feature it needs is on. */
export function useNavShown(): (item: NavItem) => boolean {
  const isOperator = useHasRole('operator');
  const isAdmin = useHasRole('admin');
  const ai = useAiConfigured();
  return (item) => {
    const role = item.role ?? 'viewer';
    if ((role === 'admin' && !isAdmin) || (role === 'operator' && !isOperator)) return false;
    return item.needs !== 'ai' || ai;
  };
}
