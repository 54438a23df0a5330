import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [{ path: '/runs/:id', component: lazy(() => import('./RunPage')) }];
