import type { GrantLevel } from '@baton/contracts';
import {
  type AuditRepo,
  DuplicateKeyError,
  type GrantRepo,
  type GrantRow,
  type PageQuery,
  type TeamRepo,
  type UserRepo,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { type Authorizer, notFound, type Principal, visibleOr404 } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, ValidationError } from '../common/errors.js';
import { idPrefix, newId } from '../common/ids.js';
import { decodeCursor, type Page, toPage } from '../common/paging.js';

/** Object types that can be granted, by id prefix, each with a way to tell whether an id exists. */
export type GrantableObjects = Record<string, (id: string) => Promise<boolean>>;

export interface GrantView {
  id: string;
  subject: string;
  object: string;
  level: GrantLevel;
  created_at: string;
  created_by: string;
}

const toView = (g: GrantRow): GrantView => ({
  id: g.id,
  subject: g.subject_id,
  object: g.object_id,
  level: g.level as GrantLevel,
  created_at: g.created_at,
  created_by: g.created_by,
});

export function createGrantService(deps: {
  grants: Pick<GrantRepo, 'list' | 'findById'>;
  users: Pick<UserRepo, 'findById'>;
  teams: Pick<TeamRepo, 'findById'>;
  transaction: <T>(
    fn: (r: { grants: Pick<GrantRepo, 'insert' | 'delete'>; audit: Pick<AuditRepo, 'append'> }) => Promise<T>,
  ) => Promise<T>;
  authz: Pick<Authorizer, 'requireCreator' | 'require' | 'requireVisible' | 'subjectsOf' | 'levelOn'>;
  grantable: GrantableObjects;
  clock: Clock;
}) {
  async function subjectExists(id: string): Promise<boolean> {
    return idPrefix(id) === 'usr' ? Boolean(await deps.users.findById(id)) : Boolean(await deps.teams.findById(id));
  }

  /** A grant is visible to admins, to its subject (or the subject's team members) and to managers of its object. */
  async function visibleGrant(p: Principal, id: string): Promise<GrantRow> {
    return visibleOr404(
      'grant',
      id,
      await deps.grants.findById(id),
      async (grant) =>
        (await deps.authz.levelOn(p, grant.object_id)) === 'manage' ||
        (await deps.authz.subjectsOf(p)).includes(grant.subject_id),
    );
  }

  return {
    /** Needs `manage` on the object (admins have it on everything); viewers never grant. */
    async create(p: Principal, body: { subject: string; object: string; level: GrantLevel }): Promise<GrantView> {
      deps.authz.requireCreator(p);
      // Own keys only: `constructor_…` must not find Object.prototype.constructor.
      const kind = idPrefix(body.object);
      const exists = Object.hasOwn(deps.grantable, kind) ? deps.grantable[kind] : undefined;
      if (!exists) {
        const kinds = Object.keys(deps.grantable)
          .map((k) => `${k}_…`)
          .join(', ');
        throw new ValidationError('this kind of object cannot be granted', [
          { path: 'body.object', message: `grantable objects: ${kinds}` },
        ]);
      }
      await deps.authz.requireVisible(p, 'manage', {
        kind: 'object',
        id: body.object,
        row: (await exists(body.object)) || null,
      });
      if (!(await subjectExists(body.subject))) throw notFound('subject', body.subject);
      const now = deps.clock();
      const row: GrantRow = {
        id: newId('grant', now.getTime()),
        subject_id: body.subject,
        object_id: body.object,
        level: body.level,
        created_at: iso(now),
        created_by: p.id,
      };
      try {
        await deps.transaction(async (r) => {
          await r.grants.insert(row);
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'grant.create',
              object: body.object,
              summary: `granted ${body.level} on ${body.object} to ${body.subject}`,
            },
            deps.clock,
          );
        });
      } catch (err) {
        if (err instanceof DuplicateKeyError)
          throw new ConflictError(
            `${body.subject} already holds a grant on ${body.object}; delete it first to change the level`,
          );
        throw err;
      }
      return toView(row);
    },

    /** Admins see every grant; others see grants they (or their teams) hold and grants on objects they manage. */
    async list(
      p: Principal,
      q: PageQuery & { cursor?: string | undefined; subject?: string | undefined; object?: string | undefined },
    ): Promise<Page<GrantView>> {
      let visibleTo: { subjects: string[]; objects: string[] } | undefined;
      if (p.role !== 'admin') {
        const subjects = await deps.authz.subjectsOf(p);
        const held = await deps.grants.list({ visibleTo: { subjects, objects: [] } }, { limit: 10_000 });
        const managed = held.filter((g) => g.level === 'manage').map((g) => g.object_id);
        visibleTo = { subjects, objects: managed };
      }
      const rows = await deps.grants.list(
        { subject_id: q.subject, object_id: q.object, visibleTo },
        { limit: q.limit + 1, before: decodeCursor(q.cursor) },
      );
      return toPage(rows.map(toView), q.limit, (g) => g.id);
    },

    async get(p: Principal, id: string): Promise<GrantView> {
      return toView(await visibleGrant(p, id));
    },

    async remove(p: Principal, id: string): Promise<void> {
      deps.authz.requireCreator(p);
      const grant = await visibleGrant(p, id);
      await deps.authz.require(p, grant.object_id, 'manage', { listable: true });
      await deps.transaction(async (r) => {
        if (!(await r.grants.delete(id))) throw notFound('grant', id);
        await recordAudit(
          r.audit,
          {
            actor: p.id,
            action: 'grant.delete',
            object: grant.object_id,
            summary: `revoked ${grant.level} on ${grant.object_id} from ${grant.subject_id}`,
          },
          deps.clock,
        );
      });
    },
  };
}
export type GrantService = ReturnType<typeof createGrantService>;
