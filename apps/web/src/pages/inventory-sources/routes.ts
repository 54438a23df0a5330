import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/inventory-sources', component: lazy(() => import('./SourcesPage')) },
  { path: '/inventory-sources/new', component: lazy(() => import('./SourceNewPage')) },
  { path: '/inventory-sources/:id', component: lazy(() => import('./SourcePage')) },
  { path: '/inventory-sources/:id/edit', component: lazy(() => import('./SourceEditPage')) },
];
