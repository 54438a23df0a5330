// Every page, split into its own chunk. Each area lists its routes in pages/<area>/routes.ts.
import type { ComponentType, LazyExoticComponent } from 'react';

export interface PageRoute {
  /** wouter pattern under /ui, e.g. `/runs/:id` */
  path: string;
  component: LazyExoticComponent<ComponentType>;
}

const areas = import.meta.glob<{ routes: PageRoute[] }>('../pages/*/routes.ts', { eager: true });

/** More specific patterns first, so `/runs/new` wins over `/runs/:id`. */
export const ROUTES: PageRoute[] = Object.values(areas)
  .flatMap((m) => m.routes)
  .sort((a, b) => specificity(b.path) - specificity(a.path));

function specificity(path: string): number {
  const parts = path.split('/').filter(Boolean);
  return parts.length * 10 + parts.filter((p) => !p.startsWith(':')).length;
}
