// POST /v1/ai/draft: a step script drafted from a description, checked without running it (the checker is injected:
// bash -n, shellcheck, Python compile(), gofmt -e, a PowerShell parse); what the checks find is returned as warnings.
import { type DraftBody, type ScriptDraft, storableText, answerFormat, DraftAnswer } from '@baton/contracts';
import type { Authorizer, Principal } from '../authz/authorize.js';
import type { AiCaller } from './ai-call.js';
import { buildRequest, createRedactor } from './ai-prompt.js';

export interface DraftDeps {
  caller: AiCaller;
  authz: Pick<Authorizer, 'requireCreator'>;
  /** never runs the script; never rejects */
  checkScript: (language: DraftBody['language'], script: string) => Promise<string[]>;
}

const NAMES: Record<DraftBody['language'], string> = {
  bash: 'a bash script (#!/usr/bin/env bash, set -euo pipefail)',
  python: 'a Python 3 script',
  powershell: 'a PowerShell script',
  go: 'a Go program (package main)',
};

export function createDrafter(deps: DraftDeps) {
  return {
    async draft(p: Principal, body: DraftBody): Promise<ScriptDraft> {
      const settings = await deps.caller.requireConfigured();
      deps.authz.requireCreator(p);
      const request = buildRequest({
        purpose: 'draft',
        instructions: [
          `Write ${NAMES[body.language]} that does what the description asks, as a step an operator will review before using it.`,
          'Make it safe to run twice, fail loudly on errors, take secrets from environment variables (never literal), and keep it short.',
          'script: the whole script. notes: how to use it, its inputs, and anything the operator must check.',
        ].join('\n'),
        parts: [
          ['description', body.description],
          ...(body.context === undefined ? [] : ([['context', body.context]] as const)),
        ],
        answer: answerFormat('script_draft', `A draft ${body.language} script`, DraftAnswer),
        redact: createRedactor([]),
      });
      const { value } = await deps.caller.call(p, settings, request, DraftAnswer);
      const script = storableText(value.script);
      return {
        language: body.language,
        script,
        notes: storableText(value.notes),
        warnings: script.trim() === '' ? ['the draft is empty'] : await deps.checkScript(body.language, script),
      };
    },
  };
}
