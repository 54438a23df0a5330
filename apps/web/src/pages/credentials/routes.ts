import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/credentials', component: lazy(() => import('./CredentialsPage')) },
  { path: '/credentials/new', component: lazy(() => import('./CredentialNewPage')) },
  { path: '/credentials/:id', component: lazy(() => import('./CredentialPage')) },
  { path: '/credentials/:id/edit', component: lazy(() => import('./CredentialEditPage')) },
];
