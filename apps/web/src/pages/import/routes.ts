import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [{ path: '/import', component: lazy(() => import('./ImportPage')) }];
