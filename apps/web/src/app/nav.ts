// The left navigation: AWX and Semaphore words where Baton's concept is the same.
import type { Role } from '@baton/contracts';

export interface NavItem {
  path: string;
  label: string;
  /** the least role that sees the entry (the API decides what each role may do; this only hides dead ends) */
  role?: Role;
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
    ],
  },
  {
    section: 'Inputs',
    items: [
      { path: '/projects', label: 'Projects' },
      { path: '/inventories', label: 'Inventories' },
      { path: '/inventory-sources', label: 'Inventory sources' },
      { path: '/credentials', label: 'Credentials' },
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
