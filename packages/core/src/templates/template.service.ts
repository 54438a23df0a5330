// Templates (issue 11, "Templates"): launch presets. A template holds a run spec or a pipeline spec, checked as a
// submission would check it (without running) whenever it is saved; launching it needs `use` on the template only,
// since its referenced objects are used with the template owner's authority (granting a template delegates a job).
import {
  type LaunchTemplateBody,
  type OverridableField,
  type Run,
  SECRET_PLACEHOLDER,
  type SubmitPipelineBody,
  type SubmitRunBody,
  type SurveyQuestion,
  TEMPLATE_SPECS,
  type Template,
  type TemplateCreateBody,
  type TemplateKind,
  type TemplateOverrides,
  type TemplateUpdateBody,
} from '@baton/contracts';
import {
  type AuditRepo,
  DuplicateKeyError,
  type GrantRepo,
  type LaunchRefRepo,
  type PageQuery,
  type TemplatePatch,
  type TemplateRepo,
  type TemplateRow,
  type UserRepo,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { type Authorizer, grantCreatorManage, notFound, type Principal, principalOf } from '../authz/authorize.js';
import { inUseConflict } from '../authz/in-use.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, type FieldError, UnprocessableError, ValidationError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { type Page, toPage, visiblePageQuery } from '../common/paging.js';
import { specReferences, type TargetLaunchContext, type TemplateLauncher } from '../launching/launcher.js';
import type { LaunchContext } from '../runs/run-launch.js';
import { answerSurvey, passwordVariablesOf } from './survey.js';

export { answerSurvey, passwordVariablesOf, type AnsweredSurvey, type SurveyResult } from './survey.js';

type TxRepos = {
  templates: Pick<TemplateRepo, 'insert' | 'update' | 'delete'>;
  grants: Pick<GrantRepo, 'insert' | 'deleteMentioning'>;
  audit: Pick<AuditRepo, 'append'>;
  launchRefs: Pick<LaunchRefRepo, 'replace' | 'deleteOwner'>;
};

type Submit<B> = (p: Principal, body: B, ctx?: LaunchContext) => Promise<Run>;

export interface TemplateServiceDeps {
  templates: Pick<TemplateRepo, 'findById' | 'list' | 'usersOf'>;
  users: Pick<UserRepo, 'findById'>;
  launchRefs: Pick<LaunchRefRepo, 'ownersOf'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireCreator' | 'requireVisible' | 'visibleIds' | 'levelOn'>;
  clock: Clock;
  /** seals password defaults under the master key (the credential seal) */
  seal: (plaintext: string) => string;
  /** opens what `seal` sealed */
  open: (sealed: string) => string;
  runs: { submit: Submit<SubmitRunBody> };
  pipelines: { submit: Submit<SubmitPipelineBody> };
}

type Spec = SubmitRunBody | SubmitPipelineBody;

/** A template as the API shows it: password defaults only as the placeholder (they are stored sealed apart). */
export function toTemplateView(row: TemplateRow): Template {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    kind: row.kind as TemplateKind,
    spec: row.spec,
    survey: row.survey as SurveyQuestion[] | null,
    allow_overrides: row.allow_overrides as OverridableField[],
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Re-roots the field errors of a submission (`body.…`) with `rewrite`; other errors pass unchanged. */
function rerooted(err: unknown, rewrite: (path: string) => string): unknown {
  if (!(err instanceof ValidationError) && !(err instanceof UnprocessableError)) return err;
  const errors = err.errors.map((e) => ({ ...e, path: rewrite(e.path) }));
  const Kind = err instanceof ValidationError ? ValidationError : UnprocessableError;
  return new Kind(err.message, errors);
}

const underSpec = (path: string) => path.replace(/^body(?=\.|$)/, 'body.spec');

/**
 * Pipeline templates at launch: vars (the overrides' extra_vars and the survey answers) go to the pipeline, which
 * every step inherits, and onto each step that sets vars of its own, so they win there too. inventory_id,
 * credential_ids and labels replace the pipeline's and every step's own (so every step takes the override); limit,
 * check, verbosity and shards apply to every step; ref to every step that runs a project playbook.
 */
function launchPipeline(
  spec: SubmitPipelineBody,
  o: TemplateOverrides,
  vars: Record<string, unknown>,
  ref: string | undefined,
): SubmitPipelineBody {
  const out: SubmitPipelineBody = { ...spec, steps: spec.steps.map((s) => ({ ...s })) };
  if (Object.keys(vars).length) out.extra_vars = { ...spec.extra_vars, ...vars };
  if (o.inventory_id !== undefined) {
    out.inventory_id = o.inventory_id;
    delete out.inventory;
  }
  if (o.credential_ids !== undefined) out.credential_ids = o.credential_ids;
  if (o.labels !== undefined) out.labels = o.labels;
  for (const step of out.steps) {
    if (step.extra_vars !== undefined && Object.keys(vars).length) step.extra_vars = { ...step.extra_vars, ...vars };
    if (o.inventory_id !== undefined) {
      delete step.inventory_id;
      delete step.inventory;
    }
    if (o.credential_ids !== undefined) delete step.credential_ids;
    if (o.labels !== undefined) delete step.labels;
    if (o.limit !== undefined) step.limit = o.limit;
    if (o.check !== undefined) step.check = o.check;
    if (o.verbosity !== undefined) step.verbosity = o.verbosity;
    if (o.shards !== undefined) step.shards = o.shards;
    const stepRef = ref ?? o.ref;
    if (stepRef !== undefined && step.project_id !== undefined) step.ref = stepRef;
  }
  return out;
}

/** Run templates at launch: overrides replace the spec's fields, vars merge over the spec's (answers win). */
function launchRun(
  spec: SubmitRunBody,
  o: TemplateOverrides,
  vars: Record<string, unknown>,
  ref: string | undefined,
): SubmitRunBody {
  const { extra_vars: _ignored, ...rest } = o;
  void _ignored;
  const out: SubmitRunBody = { ...spec, ...rest };
  if (o.inventory_id !== undefined) delete out.inventory;
  if (Object.keys(vars).length) out.extra_vars = { ...spec.extra_vars, ...vars };
  if (ref !== undefined && out.project_id !== undefined) out.ref = ref;
  return out;
}

export function createTemplateService(deps: TemplateServiceDeps) {
  async function visible(p: Principal, id: string, need: 'use' | 'manage'): Promise<TemplateRow> {
    return deps.authz.requireVisible(p, need, { kind: 'template', id, row: await deps.templates.findById(id) });
  }

  async function unique<T>(name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof DuplicateKeyError) throw new ConflictError(`a template named ${name} already exists`);
      throw err;
    }
  }

  /** The owner as a principal; null when the account was deleted. */
  const ownerOf = (row: TemplateRow): Promise<Principal | null> => principalOf(deps.users, row.created_by);

  /** Checks the spec as a submission by `p` would (objects exist and are usable, playbooks exist), storing nothing. */
  async function validateSpec(p: Principal, kind: TemplateKind, spec: Spec, authority?: Principal): Promise<void> {
    const ctx: LaunchContext = { origin: 'template', validateOnly: true, authority };
    try {
      if (kind === 'pipeline') await deps.pipelines.submit(p, spec as SubmitPipelineBody, ctx);
      else await deps.runs.submit(p, spec as SubmitRunBody, ctx);
    } catch (err) {
      throw rerooted(err, underSpec);
    }
  }

  /**
   * The survey as stored (password defaults replaced by the placeholder) and the password defaults, to be sealed.
   * A password default sent as the placeholder keeps the one in `kept` (an update); 400 when there is none.
   */
  function splitSurvey(
    survey: SurveyQuestion[],
    kept: Record<string, string>,
  ): { questions: SurveyQuestion[]; secrets: Record<string, string> } {
    const secrets: Record<string, string> = {};
    const errors: FieldError[] = [];
    const questions = survey.map((q, i) => {
      if (q.type !== 'password' || q.default === undefined) return q;
      if (q.default === SECRET_PLACEHOLDER) {
        const stored = kept[q.variable];
        if (stored === undefined)
          errors.push({
            path: `body.survey.${i}.default`,
            message: `"${SECRET_PLACEHOLDER}" keeps a stored default, but ${q.variable} has none`,
          });
        else secrets[q.variable] = stored;
      } else secrets[q.variable] = q.default as string;
      return { ...q, default: SECRET_PLACEHOLDER };
    });
    if (errors.length) throw new ValidationError('invalid survey', errors);
    return { questions, secrets };
  }

  const sealed = (secrets: Record<string, string>): string | null =>
    Object.keys(secrets).length ? deps.seal(JSON.stringify(secrets)) : null;

  function secretDefaultsOf(row: TemplateRow): Record<string, string> {
    return row.secret_defaults_enc === null
      ? {}
      : (JSON.parse(deps.open(row.secret_defaults_enc)) as Record<string, string>);
  }

  /** Words for the audit trail: never a value, password defaults included. */
  const surveyWords = (survey: readonly SurveyQuestion[] | null | undefined) =>
    survey?.length ? `, a survey of ${survey.length} question${survey.length === 1 ? '' : 's'}` : '';

  async function launch(
    p: Principal,
    id: string,
    body: LaunchTemplateBody,
    ctx: TargetLaunchContext = { origin: 'template' },
  ): Promise<Run> {
    const row = await visible(p, id, 'use');
    deps.authz.requireCreator(p);
    const overrides = body.overrides ?? {};
    const allowed = new Set(row.allow_overrides);
    const errors: FieldError[] = [];
    for (const [field, value] of Object.entries(overrides)) {
      if (value !== undefined && !allowed.has(field))
        errors.push({
          path: `body.overrides.${field}`,
          message: `template ${id} does not allow overriding ${field}${row.allow_overrides.length ? ` (only ${row.allow_overrides.join(', ')})` : ''}`,
        });
    }
    const survey = (row.survey ?? []) as SurveyQuestion[];
    const result = answerSurvey(survey, secretDefaultsOf(row), body.survey_answers ?? {});
    if (!result.ok) errors.push(...result.errors);
    if (errors.length || !result.ok)
      throw new ValidationError(`the launch of template ${id} has ${errors.length} bad field(s)`, errors);
    const owner = await ownerOf(row);
    if (!owner)
      throw new ConflictError(
        `template ${id} cannot be launched: its owner ${row.created_by} no longer exists, and its objects are used on the owner's authority; recreate the template`,
      );
    const { answers, secrets } = result.value;
    const vars = { ...overrides.extra_vars, ...answers };
    const launchCtx: LaunchContext = {
      origin: ctx.origin,
      templateId: id,
      scheduleId: ctx.scheduleId,
      triggerId: ctx.triggerId,
      authority: owner,
      surveyAnswers: survey.length ? answers : undefined,
      secretVars: Object.keys(secrets).length ? secrets : undefined,
      validateOnly: ctx.validateOnly,
    };
    const given = new Set(Object.keys(overrides));
    // The submission's field errors point into the template's spec, or at the override that set the field.
    const rewrite = (path: string) => {
      const m = /^body\.(?:steps\.\d+\.)?([a-z_]+)/.exec(path);
      if (m && given.has(m[1]!)) return `body.overrides.${m[1]}${path.slice(m[0].length)}`;
      return path.replace(/^body(?=\.|$)/, 'template.spec');
    };
    try {
      if (row.kind === 'pipeline') {
        const spec = launchPipeline(row.spec as SubmitPipelineBody, overrides, vars, ctx.ref);
        return await deps.pipelines.submit(p, spec, launchCtx);
      }
      return await deps.runs.submit(p, launchRun(row.spec as SubmitRunBody, overrides, vars, ctx.ref), launchCtx);
    } catch (err) {
      throw rerooted(err, rewrite);
    }
  }

  const launcher: TemplateLauncher = {
    launch,
    async passwordVariables(p, id) {
      return passwordVariablesOf((await visible(p, id, 'use')).survey as SurveyQuestion[] | null);
    },
    async projectIdsOf(p, id) {
      const row = await visible(p, id, 'use');
      const spec = row.spec as { project_id?: string; steps?: Array<{ project_id?: string }> };
      return [
        ...new Set([spec.project_id, ...(spec.steps ?? []).map((s) => s.project_id)].filter((x) => x !== undefined)),
      ];
    },
  };

  return {
    ...launcher,

    async create(p: Principal, body: TemplateCreateBody): Promise<Template> {
      deps.authz.requireCreator(p);
      const split = body.survey ? splitSurvey(body.survey, {}) : null;
      await validateSpec(p, body.kind, body.spec);
      const now = deps.clock();
      const at = iso(now);
      const row: TemplateRow = {
        id: newId('tpl', now.getTime()),
        name: body.name,
        description: body.description ?? null,
        kind: body.kind,
        spec: body.spec as Record<string, unknown>,
        survey: split ? (split.questions as Array<Record<string, unknown>>) : null,
        secret_defaults_enc: split ? sealed(split.secrets) : null,
        allow_overrides: body.allow_overrides ?? [],
        created_by: p.id,
        created_at: at,
        updated_at: at,
      };
      await unique(body.name, () =>
        deps.transaction(async (r) => {
          await r.templates.insert(row);
          await grantCreatorManage(r.grants, p, row.id, now);
          await r.launchRefs.replace(row.id, specReferences(body.spec));
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'template.create',
              object: row.id,
              summary: `created ${body.kind} template ${row.name}${surveyWords(body.survey)}${row.allow_overrides.length ? `, overridable: ${row.allow_overrides.join(', ')}` : ''}`,
            },
            deps.clock,
          );
        }),
      );
      return toTemplateView(row);
    },

    /** Admins see every template; others those they hold a grant on (directly or through a team). */
    async list(p: Principal, page: PageQuery & { cursor?: string | undefined }): Promise<Page<Template>> {
      const rows = await deps.templates.list(visiblePageQuery(page, await deps.authz.visibleIds(p, 'tpl')));
      const out = toPage(rows, page.limit, (x) => x.id);
      return { items: out.items.map(toTemplateView), next: out.next };
    },

    async get(p: Principal, id: string): Promise<Template> {
      return toTemplateView(await visible(p, id, 'use'));
    },

    /**
     * Needs manage. A new spec is checked again as a submission: with the caller's grants (no one puts objects they
     * cannot use into a template) and, when the caller is not the owner, with the owner's too (launches use those).
     */
    async update(p: Principal, id: string, body: TemplateUpdateBody): Promise<Template> {
      const row = await visible(p, id, 'manage');
      const kind = body.kind ?? (row.kind as TemplateKind);
      let spec: Spec | undefined;
      if (body.spec !== undefined) {
        const parsed = TEMPLATE_SPECS[kind].safeParse(body.spec);
        if (!parsed.success)
          throw new ValidationError(
            `invalid ${kind} spec`,
            parsed.error.issues.map((i) => ({
              path: ['body', 'spec', ...i.path.map(String)].join('.'),
              message: i.message,
            })),
          );
        spec = parsed.data;
      }
      const patch: TemplatePatch = { updated_at: iso(deps.clock()) };
      if (body.name !== undefined) patch.name = body.name;
      if (body.description !== undefined) patch.description = body.description;
      if (body.allow_overrides !== undefined) patch.allow_overrides = body.allow_overrides;
      if (body.survey === null) {
        patch.survey = null;
        patch.secret_defaults_enc = null;
      } else if (body.survey !== undefined) {
        const split = splitSurvey(body.survey, secretDefaultsOf(row));
        patch.survey = split.questions as Array<Record<string, unknown>>;
        patch.secret_defaults_enc = sealed(split.secrets);
      }
      if (spec !== undefined) {
        await validateSpec(p, kind, spec);
        const owner = await ownerOf(row);
        if (owner && owner.id !== p.id) await validateSpec(p, kind, spec, owner);
        patch.kind = kind;
        patch.spec = spec as Record<string, unknown>;
      }
      const changed = (['name', 'description', 'kind', 'spec', 'survey', 'allow_overrides'] as const).filter(
        (k) => body[k] !== undefined,
      );
      const name = patch.name ?? row.name;
      await unique(name, () =>
        deps.transaction(async (r) => {
          if (!(await r.templates.update(id, patch))) throw notFound('template', id);
          if (spec !== undefined) await r.launchRefs.replace(id, specReferences(spec));
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'template.update',
              object: id,
              summary: `updated template ${name}: changed ${changed.join(', ')}`,
            },
            deps.clock,
          );
        }),
      );
      return toTemplateView({ ...row, ...patch });
    },

    /** Deletes the template and the grants on it; 409 naming the schedules and triggers that still launch it. */
    async remove(p: Principal, id: string): Promise<void> {
      const row = await visible(p, id, 'manage');
      const uses = new Map<string, { kind: string; id: string; name: string }>();
      for (const u of [...(await deps.templates.usersOf(id)), ...(await deps.launchRefs.ownersOf(id))])
        uses.set(u.id, u);
      const conflict = await inUseConflict(p, `template ${id}`, [...uses.values()], deps.authz);
      if (conflict) throw conflict;
      await deps.transaction(async (r) => {
        await r.grants.deleteMentioning(id);
        await r.launchRefs.deleteOwner(id);
        const result = await r.templates.delete(id);
        if (result === 'missing') throw notFound('template', id);
        // A schedule or trigger added since usersOf answered: the foreign key still refuses the delete.
        if (result === 'in_use') throw new ConflictError(`template ${id} is still used by a schedule or trigger`);
        await recordAudit(
          r.audit,
          { actor: p.id, action: 'template.delete', object: id, summary: `deleted template ${row.name}` },
          deps.clock,
        );
      });
    },
  };
}
export type TemplateService = ReturnType<typeof createTemplateService>;
