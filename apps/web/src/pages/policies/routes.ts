import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/policies', component: lazy(() => import('./PoliciesPage')) },
  { path: '/policies/new', component: lazy(() => import('./PolicyNewPage')) },
  { path: '/policies/:id', component: lazy(() => import('./PolicyPage')) },
];
