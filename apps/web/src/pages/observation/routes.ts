import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/fleet', component: lazy(() => import('./FleetPage')) },
  { path: '/hosts/:host', component: lazy(() => import('./HostPage')) },
  { path: '/tasks', component: lazy(() => import('./TasksPage')) },
  { path: '/tasks/:key', component: lazy(() => import('./TaskPage')) },
  { path: '/drift', component: lazy(() => import('./DriftPage')) },
];
