import type { Kysely } from 'kysely';
import type { Schema } from '../schema.js';

/** A template, schedule or trigger that references an object, with its name (for the 409 on deleting that object). */
export interface LaunchRefOwner {
  id: string;
  name: string;
  kind: 'template' | 'schedule' | 'trigger';
}

/**
 * Which launcher (template, schedule, trigger) references which object (project, inventory, credential, template).
 * Each launcher's service replaces its refs in the transaction that writes it, so the 409 on deleting a referenced
 * object always sees the launcher's current spec.
 */
export function createLaunchRefRepo(db: Kysely<Schema>) {
  return {
    async replace(ownerId: string, objectIds: readonly string[]): Promise<void> {
      await db.deleteFrom('launch_refs').where('owner_id', '=', ownerId).execute();
      const unique = [...new Set(objectIds)];
      if (unique.length)
        await db
          .insertInto('launch_refs')
          .values(unique.map((object_id) => ({ owner_id: ownerId, object_id })))
          .execute();
    },
    async deleteOwner(ownerId: string): Promise<void> {
      await db.deleteFrom('launch_refs').where('owner_id', '=', ownerId).execute();
    },
    /** The templates, schedules and triggers that reference `objectId`, newest first within each kind. */
    async ownersOf(objectId: string): Promise<LaunchRefOwner[]> {
      const owners = db.selectFrom('launch_refs').select('owner_id').where('object_id', '=', objectId);
      const [templates, schedules, triggers] = [
        await db
          .selectFrom('templates')
          .select(['id', 'name'])
          .where('id', 'in', owners)
          .orderBy('id', 'desc')
          .execute(),
        await db
          .selectFrom('schedules')
          .select(['id', 'name'])
          .where('id', 'in', owners)
          .orderBy('id', 'desc')
          .execute(),
        await db
          .selectFrom('triggers')
          .select(['id', 'name'])
          .where('id', 'in', owners)
          .orderBy('id', 'desc')
          .execute(),
      ];
      return [
        ...templates.map((r) => ({ ...r, kind: 'template' as const })),
        ...schedules.map((r) => ({ ...r, kind: 'schedule' as const })),
        ...triggers.map((r) => ({ ...r, kind: 'trigger' as const })),
      ];
    },
  };
}
export type LaunchRefRepo = ReturnType<typeof createLaunchRefRepo>;
