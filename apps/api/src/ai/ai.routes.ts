import {
  AiSettings,
  AiStatus,
  AskAnswer,
  AskBody,
  DraftBody,
  ExplainQuery,
  ProposedRun,
  ProposeRunBody,
  PutAiSettingsBody,
  RunExplanation,
  RunIdParams,
  RunProposalRecord,
  ScriptDraft,
} from '@baton/contracts';
import { defineOperation, type Operation } from '../http/registry.js';
import type { Services } from '../wiring.js';

const ADVISORY =
  'Advisory: the answer is the model’s text for a person to review. Without a configured provider this answers 503 (`ai-not-configured`); a provider that fails, is too slow or answers garbage gives 502 (`ai-provider-error`, with `provider_status` when it answered one). Everything sent to the provider is redacted (credential values, survey passwords, tokens, trigger secrets, no_log results) and text from logs and inventories is fenced as untrusted data.';
const NOT_CONFIGURED = { description: 'No AI provider is configured (`ai-not-configured`)' };
const PROVIDER_FAILED = { description: 'The provider failed, timed out or answered something unusable' };

export function aiRoutes(s: Pick<Services, 'ai' | 'aiSettings'>): Operation[] {
  return [
    defineOperation({
      operationId: 'getAiStatus',
      method: 'get',
      path: '/ai/status',
      tag: 'ai',
      auth: 'user',
      summary: 'Whether the AI helpers are available (the UI hides them when not).',
      responses: { 200: { description: 'Status', schema: AiStatus } },
      async handle() {
        return { status: 200, body: await s.aiSettings.status() };
      },
    }),
    defineOperation({
      operationId: 'getAiSettings',
      method: 'get',
      path: '/settings/ai',
      tag: 'ai',
      auth: 'user',
      summary: 'The AI provider in force (admins); the key is never returned, only whether one is set.',
      responses: { 200: { description: 'Settings', schema: AiSettings } },
      async handle({ principal }) {
        return { status: 200, body: await s.aiSettings.get(principal) };
      },
    }),
    defineOperation({
      operationId: 'putAiSettings',
      method: 'put',
      path: '/settings/ai',
      tag: 'ai',
      auth: 'user',
      summary: 'Store the AI provider (admins): the key sealed under the master key like credentials.',
      description:
        'Omitting api_key keeps the stored key while the base URL stays the same; a new base URL without a key stores none (a key is never sent to another server than the one it was given for). 409 while BATON_AI_PROVIDER configures the provider.',
      body: PutAiSettingsBody,
      responses: {
        200: { description: 'Stored', schema: AiSettings },
        409: { description: 'The environment (BATON_AI_*) configures the provider' },
      },
      async handle({ principal, body }) {
        return { status: 200, body: await s.aiSettings.put(principal, body) };
      },
    }),
    defineOperation({
      operationId: 'deleteAiSettings',
      method: 'delete',
      path: '/settings/ai',
      tag: 'ai',
      auth: 'user',
      summary: 'Remove the stored AI provider (admins): the AI helpers answer 503 again.',
      responses: {
        204: { description: 'Removed' },
        404: { description: 'No settings are stored' },
        409: { description: 'The environment (BATON_AI_*) configures the provider' },
      },
      async handle({ principal }) {
        await s.aiSettings.remove(principal);
        return { status: 204 };
      },
    }),
    defineOperation({
      operationId: 'explainRun',
      method: 'post',
      path: '/runs/{id}/explain',
      tag: 'ai',
      auth: 'user',
      summary: 'Explain why a finished run ended as it did: causes, fixes, and the events it rests on.',
      description: `From the run’s failed results, per-host outcomes, the log around the failures and its task list. Kept per run: later calls answer the stored explanation (\`cached: true\`) until \`refresh=true\`. Every cited event exists in the run. The caller must see the run. ${ADVISORY}`,
      params: RunIdParams,
      query: ExplainQuery,
      responses: {
        200: { description: 'The explanation', schema: RunExplanation },
        404: { description: 'Unknown run, or one the caller cannot see' },
        409: { description: 'The run has not finished' },
        502: PROVIDER_FAILED,
        503: NOT_CONFIGURED,
      },
      async handle({ principal, params, query }) {
        return { status: 200, body: await s.ai.explain(principal, params.id, query.refresh === 'true') };
      },
    }),
    defineOperation({
      operationId: 'draftScript',
      method: 'post',
      path: '/ai/draft',
      tag: 'ai',
      auth: 'user',
      summary: 'Draft a step script (bash, python, powershell or go) from a description; checked, never run.',
      description: `The draft is checked without running it (bash -n and shellcheck when installed, Python compile(), gofmt -e when Go is installed, a PowerShell parse) and \`warnings\` report what the checks found or could not check. Needs the operator or admin role. ${ADVISORY}`,
      body: DraftBody,
      responses: {
        200: { description: 'The draft', schema: ScriptDraft },
        403: { description: 'Viewer role' },
        502: PROVIDER_FAILED,
        503: NOT_CONFIGURED,
      },
      async handle({ principal, body }) {
        return { status: 200, body: await s.ai.draft(principal, body) };
      },
    }),
    defineOperation({
      operationId: 'askFleet',
      method: 'post',
      path: '/ai/ask',
      tag: 'ai',
      auth: 'user',
      summary:
        'Answer a question about the fleet from the runs, fleet health, drift and task trends the caller may see.',
      description: `The material is read with the caller’s own grants before the prompt is built; citations of anything not in it are dropped. Rate limited per user across replicas (BATON_AI_ASK_RATE per minute, default 10): 429 with Retry-After. ${ADVISORY}`,
      body: AskBody,
      responses: {
        200: { description: 'The answer', schema: AskAnswer },
        429: { description: 'Too many questions: Retry-After says when to ask again' },
        502: PROVIDER_FAILED,
        503: NOT_CONFIGURED,
      },
      async handle({ principal, body }) {
        return { status: 200, body: await s.ai.ask(principal, body) };
      },
    }),
    defineOperation({
      operationId: 'proposeRun',
      method: 'post',
      path: '/ai/propose-run',
      tag: 'ai',
      auth: 'user',
      summary: 'Turn a plain-language request into a run, validated like any submission and held for approval.',
      description: `The model proposes a project playbook, ref, inventory, limit, extra vars and check mode among the objects the caller may see; the server submits it with the caller’s grants (objects usable, playbook present at the commit, limit matching hosts) as origin \`ai\`, always held for approval, which the proposer cannot give. A proposal a submission refuses answers 422 with the reasons and creates no run. Needs the operator or admin role. ${ADVISORY}`,
      body: ProposeRunBody,
      responses: {
        201: { description: 'The held run and the proposal', schema: ProposedRun },
        403: { description: 'Viewer role' },
        422: { description: 'The proposal is not a run the caller may submit (reasons in errors)' },
        502: PROVIDER_FAILED,
        503: NOT_CONFIGURED,
      },
      async handle({ principal, body }) {
        const result = await s.ai.propose(principal, body);
        return { status: 201, body: result, headers: { Location: `/v1/runs/${result.run.id}` } };
      },
    }),
    defineOperation({
      operationId: 'getRunProposal',
      method: 'get',
      path: '/runs/{id}/proposal',
      tag: 'ai',
      auth: 'user',
      summary: 'The request and rationale behind a run the AI proposed (origin ai).',
      params: RunIdParams,
      responses: {
        200: { description: 'The proposal', schema: RunProposalRecord },
        404: { description: 'Unknown or invisible run, or one the AI did not propose' },
      },
      async handle({ principal, params }) {
        return { status: 200, body: await s.ai.proposalOf(principal, params.id) };
      },
    }),
  ];
}
