// POST /v1/ai/propose-run: a plain-language request turned into a run proposal by the model, chosen among objects the
// caller may see, then submitted like any run (the caller's grants, the playbook at the commit, the limit against the
// inventory) with origin `ai`, which always holds it for approval; the proposer cannot approve it. Whatever the model
// proposes that a submission refuses is a 422 with the reasons, and no run.
import {
  type ProposedRun,
  type ProposeRunBody,
  RunListQuery,
  RunProposal,
  type RunProposalRecord,
  storableText,
  answerFormat,
  ProposeAnswer,
} from '@baton/contracts';
import type { AiRepo } from '@baton/db';
import type { Authorizer, Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import {
  type FieldError,
  ForbiddenError,
  NotFoundError,
  UnprocessableError,
  ValidationError,
} from '../common/errors.js';
import type { InventoryService } from '../inventories/inventory.service.js';
import type { ProjectService } from '../projects/project.service.js';
import type { RunAccess } from '../runs/run-access.js';
import type { RunService } from '../runs/run.service.js';
import type { AiCaller } from './ai-call.js';
import { buildRequest, createRedactor } from './ai-prompt.js';

export interface ProposeDeps {
  caller: AiCaller;
  authz: Pick<Authorizer, 'requireCreator'>;
  access: Pick<RunAccess, 'visibleRun'>;
  projects: Pick<ProjectService, 'list'>;
  inventories: Pick<InventoryService, 'list'>;
  runs: Pick<RunService, 'list' | 'submit'>;
  ai: Pick<AiRepo, 'insertProposal' | 'proposal'>;
  clock: Clock;
}

const INSTRUCTIONS = [
  "Turn the operator's request into one Ansible run proposal: a project playbook on a stored inventory.",
  'Choose project_id and inventory_id only among the projects and inventories given, and a playbook path inside that project (the playbooks already run from it are listed).',
  'limit: an Ansible host pattern when the request names hosts or groups, else leave it out. check: true for a dry run (--check --diff) when the request asks to see what would change. extra_vars only when the request gives values.',
  'rationale: one or two sentences for the approver: what the run does and why it matches the request.',
  'The run will be held for a person to approve; you cannot start it.',
].join('\n');

/** A submission's refusal of the proposal, as the reasons of a 422. */
function refusal(err: unknown): UnprocessableError | undefined {
  if (err instanceof ValidationError || err instanceof UnprocessableError)
    // The submission names the fields of a run body; here they are the proposal's.
    return new UnprocessableError(
      `the proposed run cannot be submitted: ${err.message}`,
      err.errors.map((e) => ({ ...e, path: e.path.replace(/^body(?=\.|$)/, 'proposal') })),
    );
  if (err instanceof NotFoundError || err instanceof ForbiddenError)
    return new UnprocessableError(`the proposed run cannot be submitted: ${err.message}`, [
      { path: 'proposal', message: err.message },
    ]);
  return undefined;
}

export function createProposer(deps: ProposeDeps) {
  async function material(p: Principal) {
    const [projects, inventories, runs] = await Promise.all([
      deps.projects.list(p, { limit: 100 }),
      deps.inventories.list(p, { limit: 100 }),
      deps.runs.list(p, RunListQuery.parse({ limit: '200' })),
    ]);
    const playbooks = new Map<string, Set<string>>();
    for (const r of runs.items) {
      if (r.project_id === null) continue;
      playbooks.set(r.project_id, (playbooks.get(r.project_id) ?? new Set()).add(r.playbook));
    }
    return {
      projects: projects.items.map((x) => ({
        id: x.id,
        name: x.name,
        branch: x.branch,
        playbooks_run_before: [...(playbooks.get(x.id) ?? [])],
      })),
      inventories: inventories.items.map((i) => ({
        id: i.id,
        name: i.name,
        hosts: i.host_count,
        groups: i.groups.map((g) => g.name),
      })),
    };
  }

  return {
    async propose(p: Principal, body: ProposeRunBody): Promise<ProposedRun> {
      const settings = await deps.caller.requireConfigured();
      deps.authz.requireCreator(p);
      const { projects, inventories } = await material(p);
      const request = buildRequest({
        purpose: 'propose',
        instructions: INSTRUCTIONS,
        parts: [
          ['request', body.request],
          ['projects', projects],
          ['inventories', inventories],
        ],
        answer: answerFormat('run_proposal', 'A proposed Ansible run, held for approval', ProposeAnswer),
        redact: createRedactor([]),
      });
      const { value, model } = await deps.caller.call(p, settings, request, ProposeAnswer);
      const parsed = RunProposal.safeParse({
        project_id: value.project_id,
        playbook: value.playbook,
        ref: value.ref ?? undefined,
        inventory_id: value.inventory_id,
        limit: value.limit ?? undefined,
        extra_vars: value.extra_vars ?? undefined,
        check: value.check ?? undefined,
        rationale: storableText(value.rationale),
      });
      if (!parsed.success) {
        const errors: FieldError[] = parsed.error.issues.map((i) => ({
          path: ['proposal', ...i.path.map(String)].join('.'),
          message: i.message,
        }));
        throw new UnprocessableError('the proposal is not a valid run', errors);
      }
      const proposal = parsed.data;
      const { rationale: _rationale, ...spec } = proposal;
      let run;
      try {
        run = await deps.runs.submit(p, spec, { origin: 'ai', requireHosts: true });
      } catch (err) {
        throw refusal(err) ?? err;
      }
      const record = {
        run_id: run.id,
        request: body.request,
        proposal,
        proposed_by: p.id,
        model,
        created_at: iso(deps.clock()),
      };
      await deps.ai.insertProposal(record);
      const { run_id: _runId, ...rest } = record;
      return { run, ...rest };
    },

    /** Why the AI proposed this run; 404 when the caller cannot see it or it was not proposed. */
    async proposalOf(p: Principal, runId: string): Promise<RunProposalRecord> {
      await deps.access.visibleRun(p, runId);
      const row = await deps.ai.proposal(runId);
      if (!row) throw new NotFoundError(`run ${runId} was not proposed by the AI`);
      return { ...row, proposal: RunProposal.parse(row.proposal) };
    },
  };
}
