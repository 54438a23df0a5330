import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/teams', component: lazy(() => import('./TeamsPage')) },
  { path: '/teams/:id', component: lazy(() => import('./TeamPage')) },
];
