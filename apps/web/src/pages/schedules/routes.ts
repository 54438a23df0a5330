import { lazy } from 'react';
import type { PageRoute } from '../../app/routes';

export const routes: PageRoute[] = [
  { path: '/schedules', component: lazy(() => import('./SchedulesPage')) },
  { path: '/schedules/new', component: lazy(() => import('./ScheduleFormPage')) },
  { path: '/schedules/:id', component: lazy(() => import('./SchedulePage')) },
  { path: '/schedules/:id/edit', component: lazy(() => import('./ScheduleFormPage')) },
];
