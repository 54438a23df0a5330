// Advisory AI helpers (issue 15): provider settings, explain, draft, ask and propose-run. Every answer is advisory
// text; the only thing a model can start is a proposal, validated like any submission and held for approval.
import { z } from 'zod';
import { checkedBy, idOf, NO_CONTROL_CHARACTERS, Timestamp } from '../common/common.schemas.js';
import { unstorableTextReason } from '../common/text.js';
import { tryParseUrl } from '../network/safe-url.js';
import { Run, RUN_SPEC_FIELDS } from '../runs/run.schemas.js';

export const AiProviderName = z.enum(['openai', 'anthropic']).meta({
  description:
    '`openai`: any server speaking the OpenAI chat-completions protocol (OpenAI, Azure OpenAI, vLLM, Ollama, LM Studio); `anthropic`: the Anthropic messages protocol',
});
export type AiProviderName = z.infer<typeof AiProviderName>;

export const DEFAULT_AI_TIMEOUT_S = 60;
export const MAX_AI_TIMEOUT_S = 600;
export const DEFAULT_AI_MAX_OUTPUT_TOKENS = 2000;
export const MAX_AI_MAX_OUTPUT_TOKENS = 32_000;
/** Asks per user per minute unless BATON_AI_ASK_RATE says otherwise. */
export const DEFAULT_AI_ASK_RATE = 10;

/** Text a person typed: well-formed Unicode, bounded. */
const Prose = (max: number) => z.string().trim().min(1).max(max).superRefine(checkedBy(unstorableTextReason));

function httpUrlProblem(text: string): string | undefined {
  const url = tryParseUrl(text);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return 'must be an http(s) URL';
  if (url.username || url.password) return 'must not hold credentials (give api_key instead)';
  return undefined;
}

export const AiBaseUrl = z.string().max(2048).superRefine(checkedBy(httpUrlProblem)).meta({
  description:
    'the provider API root: for openai it includes `/v1` (e.g. https://api.openai.com/v1), for anthropic it does not (https://api.anthropic.com)',
});

export const AiModelName = z
  .string()
  .min(1)
  .max(200)
  .regex(NO_CONTROL_CHARACTERS, 'must not contain control characters')
  .superRefine(checkedBy(unstorableTextReason));

/** What GET /v1/settings/ai answers (admins): never the key itself. */
export const AiSettings = z
  .object({
    configured: z.boolean(),
    source: z
      .enum(['environment', 'settings'])
      .nullable()
      .meta({ description: '`environment` (BATON_AI_*: PUT then answers 409) or `settings` (stored by an admin)' }),
    provider: AiProviderName.nullable(),
    base_url: z.string().nullable(),
    model: z.string().nullable(),
    api_key_set: z.boolean(),
    timeout_s: z.number().int(),
    max_output_tokens: z.number().int(),
    updated_at: Timestamp.nullable(),
    updated_by: z.string().nullable(),
  })
  .meta({ id: 'AiSettings' });
export type AiSettings = z.infer<typeof AiSettings>;

export const PutAiSettingsBody = z
  .strictObject({
    provider: AiProviderName,
    base_url: AiBaseUrl,
    model: AiModelName,
    api_key: z
      .string()
      .min(1)
      .max(4096)
      .regex(/^[\x21-\x7e]+$/, 'must be visible ASCII without spaces')
      .optional()
      .meta({
        description: 'sealed at rest like credentials and never returned; omitted: the stored key is kept',
      }),
    timeout_s: z.number().int().min(1).max(MAX_AI_TIMEOUT_S).optional(),
    max_output_tokens: z.number().int().min(64).max(MAX_AI_MAX_OUTPUT_TOKENS).optional(),
  })
  .meta({ id: 'PutAiSettingsBody' });
export type PutAiSettingsBody = z.infer<typeof PutAiSettingsBody>;

/** GET /v1/ai/status: whether the AI helpers are available (any signed-in user; the UI hides them when not). */
export const AiStatus = z.object({ configured: z.boolean() }).meta({ id: 'AiStatus' });
export type AiStatus = z.infer<typeof AiStatus>;

export const ExplainQuery = z.strictObject({
  refresh: z
    .enum(['true', 'false'])
    .optional()
    .meta({ description: 'true: ask the provider again instead of answering the stored explanation' }),
});

export const RunExplanation = z
  .object({
    run_id: z.string(),
    summary: z.string(),
    likely_causes: z.array(z.string()),
    suggested_fixes: z.array(z.string()),
    cited_events: z
      .array(z.number().int())
      .meta({ description: 'seqs of the run events the explanation rests on; every one exists in the run' }),
    cited_lines: z
      .array(
        z.object({
          seq: z.number().int(),
          start_line: z.number().int().nullable(),
          end_line: z.number().int().nullable(),
        }),
      )
      .meta({
        description: 'each cited event with the log lines [start_line, end_line) printed with it, for links to the log',
      }),
    model: z.string(),
    generated_at: Timestamp,
    cached: z.boolean().meta({ description: 'true when answered from the stored explanation' }),
  })
  .meta({ id: 'RunExplanation' });
export type RunExplanation = z.infer<typeof RunExplanation>;

export const DraftLanguage = z.enum(['bash', 'python', 'powershell', 'go']);
export type DraftLanguage = z.infer<typeof DraftLanguage>;

export const DraftBody = z
  .strictObject({
    description: Prose(4000),
    language: DraftLanguage,
    context: Prose(8000).optional().meta({ description: 'anything else the script should know (paths, versions…)' }),
  })
  .meta({ id: 'DraftBody' });
export type DraftBody = z.infer<typeof DraftBody>;

export const ScriptDraft = z
  .object({
    language: DraftLanguage,
    script: z.string(),
    notes: z.string(),
    warnings: z.array(z.string()).meta({
      description:
        'what the checks found (bash -n, shellcheck, Python compile(), gofmt -e, a PowerShell parse), or which check was not available; the script is never run',
    }),
  })
  .meta({ id: 'ScriptDraft' });
export type ScriptDraft = z.infer<typeof ScriptDraft>;

export const AskBody = z.strictObject({ question: Prose(2000) }).meta({ id: 'AskBody' });
export type AskBody = z.infer<typeof AskBody>;

export const AiCitationKind = z.enum(['run', 'host', 'drift', 'task']);
export type AiCitationKind = z.infer<typeof AiCitationKind>;

export const AskAnswer = z
  .object({
    answer: z.string(),
    citations: z.array(z.object({ kind: AiCitationKind, id: z.string() })).meta({
      description: 'the runs, hosts, drift items and tasks the answer rests on; only ones the caller may see',
    }),
  })
  .meta({ id: 'AskAnswer' });
export type AskAnswer = z.infer<typeof AskAnswer>;

export const ProposeRunBody = z
  .strictObject({ request: Prose(4000).meta({ description: 'what to run, in plain language' }) })
  .meta({ id: 'ProposeRunBody' });
export type ProposeRunBody = z.infer<typeof ProposeRunBody>;

/** The run a model proposes: a project playbook on a stored inventory, checked like any submission. */
export const RunProposal = z
  .strictObject({
    project_id: idOf('prj'),
    playbook: RUN_SPEC_FIELDS.playbook,
    ref: RUN_SPEC_FIELDS.ref,
    inventory_id: idOf('inv'),
    limit: RUN_SPEC_FIELDS.limit,
    extra_vars: RUN_SPEC_FIELDS.extra_vars,
    check: z.boolean().optional(),
    rationale: Prose(4000),
  })
  .meta({ id: 'RunProposal' });
export type RunProposal = z.infer<typeof RunProposal>;

export const ProposedRun = z
  .object({
    run: Run,
    proposal: RunProposal,
    request: z.string(),
    proposed_by: z.string(),
    model: z.string(),
    created_at: Timestamp,
  })
  .meta({ id: 'ProposedRun' });
export type ProposedRun = z.infer<typeof ProposedRun>;

/** GET /v1/runs/{id}/proposal: the request and rationale behind a run the AI proposed (origin `ai`). */
export const RunProposalRecord = ProposedRun.omit({ run: true })
  .extend({ run_id: z.string() })
  .meta({ id: 'RunProposalRecord' });
export type RunProposalRecord = z.infer<typeof RunProposalRecord>;
