import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/triggers', component: lazy(() => import('./TriggersPage')) },
  { path: '/triggers/new', component: lazy(() => import('./TriggerNewPage')) },
  { path: '/triggers/:id', component: lazy(() => import('./TriggerPage')) },
];
