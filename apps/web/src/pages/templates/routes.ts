import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/templates', component: lazy(() => import('./TemplatesPage')) },
  { path: '/templates/new', component: lazy(() => import('./TemplateFormPage')) },
  { path: '/templates/:id', component: lazy(() => import('./TemplatePage')) },
  { path: '/templates/:id/edit', component: lazy(() => import('./TemplateFormPage')) },
  { path: '/templates/:id/launch', component: lazy(() => import('./LaunchPage')) },
];
