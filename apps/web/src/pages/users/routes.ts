import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/users', component: lazy(() => import('./UsersPage')) },
  { path: '/users/:id', component: lazy(() => import('./UserPage')) },
];
