// How a run started (issue 11, "One submission path"): every launcher (POST /v1/runs, pipelines, templates,
// schedules, triggers, later AI proposals, reconcile and imports) hands the same submit function its run spec and
// one of these, so validation, grants, audit and enqueue are the same however a run starts.
import { type RunOrigin, SECRET_PLACEHOLDER } from '@baton/contracts';
import type { Principal } from '../authz/authorize.js';

export interface LaunchContext {
  origin: RunOrigin;
  templateId?: string | undefined;
  scheduleId?: string | undefined;
  triggerId?: string | undefined;
  /**
   * Whose grants the referenced objects are checked against: a template's owner when someone launches it (granting a
   * template is how operators delegate a job). Default: the submitter.
   */
  authority?: Principal | undefined;
  /** the survey answers to record on the run (never password answers) */
  surveyAnswers?: Record<string, unknown> | undefined;
  /**
   * Password answers: sealed onto the run (runs.secret_vars_enc), shown as `$encrypted$` in its extra_vars, given to
   * ansible as extra vars at dispatch and masked in its output.
   */
  secretVars?: Record<string, string> | undefined;
  /** Check everything a submission checks, store and enqueue nothing (creating a template, schedule or trigger). */
  validateOnly?: boolean | undefined;
  /**
   * Refuse (422 at body.limit) a run whose inventory and limit target no host. Ansible would only warn and succeed
   * with nothing done; a proposal the AI made must name hosts that exist.
   */
  requireHosts?: boolean | undefined;
}

/** What a run's recorded extra_vars shows in place of a secret value (the same words as a template's password default). */
export const ENCRYPTED_PLACEHOLDER = SECRET_PLACEHOLDER;

export const API_LAUNCH: LaunchContext = { origin: 'api' };
