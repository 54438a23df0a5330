import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/inventories', component: lazy(() => import('./InventoriesPage')) },
  { path: '/inventories/new', component: lazy(() => import('./InventoryNewPage')) },
  { path: '/inventories/:id', component: lazy(() => import('./InventoryPage')) },
  { path: '/inventories/:id/edit', component: lazy(() => import('./InventoryEditPage')) },
];
