import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [{ path: '/tokens', component: lazy(() => import('./TokensPage')) }];
