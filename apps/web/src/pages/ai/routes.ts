import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/ai/draft', component: lazy(() => import('./DraftPage')) },
  { path: '/ai/propose', component: lazy(() => import('./ProposePage')) },
  { path: '/settings/ai', component: lazy(() => import('./AiSettingsPage')) },
];
