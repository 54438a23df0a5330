import { type RawBuilder, sql } from 'kysely';
import type { RunVisibility } from '../runs/run.repo.js';

/**
 * The runs domain's visibility rule over a rollup table's visibility columns (submitted_by, project_id,
 * inventory_id, template_id), as a condition on `alias`; true for 'all'.
 */
export function visibleRows(alias: string, visible: RunVisibility): RawBuilder<boolean> {
  if (visible === 'all') return sql<boolean>`1 = 1`;
  const col = (name: string) => sql.ref(`${alias}.${name}`);
  const parts = [sql`${col('submitted_by')} = ${visible.submittedBy}`];
  const anyOf = (name: string, ids: string[]) => {
    if (ids.length > 0) parts.push(sql`${col(name)} in (${sql.join(ids)})`);
  };
  anyOf('project_id', visible.projectIds);
  anyOf('inventory_id', visible.inventoryIds);
  anyOf('template_id', visible.templateIds);
  return sql<boolean>`(${sql.join(parts, sql` or `)})`;
}

/** `alias.column = value` for each given value (undefined: no condition), joined with `and`; true when none. */
export function equalities(alias: string, filter: Record<string, string | undefined>): RawBuilder<boolean> {
  const parts = Object.entries(filter)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([column, value]) => sql`${sql.ref(`${alias}.${column}`)} = ${value}`);
  return parts.length === 0 ? sql<boolean>`1 = 1` : sql<boolean>`(${sql.join(parts, sql` and `)})`;
}
