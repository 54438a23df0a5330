import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/notifiers', component: lazy(() => import('./NotifiersPage')) },
  { path: '/notifiers/new', component: lazy(() => import('./NotifierNewPage')) },
  { path: '/notifiers/:id', component: lazy(() => import('./NotifierPage')) },
];
