import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/pipelines', component: lazy(() => import('./PipelinesPage')) },
  { path: '/pipelines/new', component: lazy(() => import('./NewPipelinePage')) },
];
