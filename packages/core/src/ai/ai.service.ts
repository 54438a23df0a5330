// The advisory AI helpers (issue 15), composed: one caller (settings in force, provider, usage, audit) shared by
// explain, draft, ask and propose-run.
import { type AiCallDeps, createAiCaller } from './ai-call.js';
import { type AskDeps, createAsker } from './ai-ask.js';
import { createDrafter, type DraftDeps } from './ai-draft.js';
import { createExplainer, type ExplainDeps } from './ai-explain.js';
import { createProposer, type ProposeDeps } from './ai-propose.js';

type WithoutCaller<T> = Omit<T, 'caller'>;

export interface AiServiceDeps {
  call: AiCallDeps;
  explain: WithoutCaller<ExplainDeps>;
  draft: WithoutCaller<DraftDeps>;
  ask: WithoutCaller<AskDeps>;
  propose: WithoutCaller<ProposeDeps>;
}

export function createAiService(deps: AiServiceDeps) {
  const caller = createAiCaller(deps.call);
  return {
    ...createExplainer({ ...deps.explain, caller }),
    ...createDrafter({ ...deps.draft, caller }),
    ...createAsker({ ...deps.ask, caller }),
    ...createProposer({ ...deps.propose, caller }),
  };
}
export type AiService = ReturnType<typeof createAiService>;
