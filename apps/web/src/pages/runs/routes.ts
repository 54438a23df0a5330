import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/runs', component: lazy(() => import('./RunsPage')) },
  { path: '/runs/new', component: lazy(() => import('./NewRunPage')) },
];
