// Deciding on a run held by approval policies (issue 12).
import { z } from 'zod';
import { Timestamp } from '../common/common.schemas.js';

/** Longest approve or reject comment. */
export const MAX_DECISION_COMMENT_CHARS = 2000;

/** POST /v1/runs/{id}/approve and /reject. */
export const RunDecisionBody = z
  .strictObject({ comment: z.string().max(MAX_DECISION_COMMENT_CHARS).optional() })
  .meta({ id: 'RunDecisionBody' });
export type RunDecisionBody = z.infer<typeof RunDecisionBody>;

export const RunDecision = z.enum(['approve', 'reject']);
export type RunDecision = z.infer<typeof RunDecision>;

/** One decision recorded on a held run. */
export const RunApproval = z
  .object({
    user_id: z.string(),
    username: z.string(),
    decision: RunDecision,
    comment: z.string().nullable(),
    at: Timestamp,
  })
  .meta({ id: 'RunApproval' });
export type RunApproval = z.infer<typeof RunApproval>;
