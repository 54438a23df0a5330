import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/projects', component: lazy(() => import('./ProjectsPage')) },
  { path: '/projects/new', component: lazy(() => import('./ProjectNewPage')) },
  { path: '/projects/:id', component: lazy(() => import('./ProjectPage')) },
  { path: '/projects/:id/edit', component: lazy(() => import('./ProjectEditPage')) },
];
