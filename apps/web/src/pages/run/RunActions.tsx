// The actions the caller may take on a run, in the states where they apply: cancel, retry, approve, reject.
// The role and the run's state decide what shows; the API stays the judge (its 403/409 is shown as a message).
import type { Run } from '@baton/contracts';
import { useId, useRef, useState } from 'react';
import { useLocation } from 'wouter';
import { useApiMutation } from '../../api/hooks';
import { useHasRole } from '../../auth/auth';
import { ConfirmButton } from '../../ui/Confirm';
import { FormError } from '../../ui/forms';
import { useMayAct } from './useMayAct';
import { useMayDecide } from './useMayDecide';

const UNFINISHED = ['pending', 'held', 'waiting', 'running'];
const RETRYABLE = ['failed', 'error'];

/** Cancel applies to a run that has not finished; shards and steps are canceled through their parent too. */
export function canCancel(run: Run): boolean {
  return UNFINISHED.includes(run.status) && run.status !== 'waiting' && run.cancel_requested_at === null;
}

/** Retry applies to a finished top-level run something of which failed (a split retries only its failed shards). */
export function canRetry(run: Run): boolean {
  return (
    run.status === 'finished' &&
    run.kind !== 'shard' &&
    run.kind !== 'step' &&
    run.conclusion !== null &&
    RETRYABLE.includes(run.conclusion)
  );
}

const INVALIDATE = ['/v1/runs'];

export function RunActions({ run, compact }: { run: Run; compact?: boolean }) {
  const isOperator = useHasRole('operator');
  const [, navigate] = useLocation();
  const decision = useMayDecide(run);

  const cancel = useApiMutation<void, Run>('POST', `/v1/runs/${run.id}/cancel`, { invalidate: INVALIDATE });
  const retry = useApiMutation<void, Run>('POST', `/v1/runs/${run.id}/retry`, {
    invalidate: INVALIDATE,
    onSuccess: (fresh) => navigate(`/runs/${fresh.id}`),
  });
  const approve = useApiMutation<{ comment?: string }, Run>('POST', `/v1/runs/${run.id}/approve`, {
    invalidate: INVALIDATE,
  });
  const reject = useApiMutation<{ comment?: string }, Run>('POST', `/v1/runs/${run.id}/reject`, {
    invalidate: INVALIDATE,
  });

  const mayAct = useMayAct(run, isOperator && (canCancel(run) || canRetry(run)));
  const showCancel = mayAct && canCancel(run);
  const showRetry = mayAct && canRetry(run);
  const showApprove = decision.mayApprove;
  const showReject = decision.mayReject;
  const errors = [cancel.error, retry.error, approve.error, reject.error].filter(Boolean);
  if (!showCancel && !showRetry && !showApprove && !showReject && errors.length === 0) return null;

  const what = run.kind === 'split' ? 'split' : run.kind === 'pipeline' ? 'pipeline run' : 'run';
  return (
    <div className={`run-actions${compact ? ' run-actions-compact' : ''}`} data-testid="run-actions">
      {showApprove || showReject ? (
        <DecisionForm
          runId={run.id}
          compact={compact}
          canApprove={showApprove}
          canReject={showReject}
          busy={approve.isPending || reject.isPending}
          onApprove={(comment) => approve.mutate(comment ? { comment } : {})}
          onReject={(comment) => reject.mutate(comment ? { comment } : {})}
        />
      ) : null}
      {showRetry ? (
        <button
          type="button"
          className={compact ? 'btn btn-small' : 'btn'}
          disabled={retry.isPending}
          onClick={() => retry.mutate()}
          title={run.kind === 'split' ? 'A new split of only the failed shards' : 'Again, on the failed hosts'}
        >
          {run.kind === 'split' ? 'Retry failed shards' : 'Retry'}
        </button>
      ) : null}
      {showCancel ? (
        <ConfirmButton
          question={`Cancel this ${what}?`}
          detail={
            run.status === 'running'
              ? 'ansible-playbook is stopped; the run finishes canceled.'
              : 'It will never run; it finishes canceled.'
          }
          confirmLabel={`Cancel ${what}`}
          disabled={cancel.isPending}
          onConfirm={() => cancel.mutate()}
        >
          Cancel
        </ConfirmButton>
      ) : null}
      {run.cancel_requested_at && run.status !== 'finished' ? (
        <span className="muted" role="status">
          Stopping…
        </span>
      ) : null}
      {errors.map((err, i) => (
        <div key={i} className="run-action-error">
          <FormError error={err} />
        </div>
      ))}
    </div>
  );
}

/** Approve and reject with an optional comment (a reject's comment tells the submitter why). */
function DecisionForm(props: {
  runId: string;
  compact?: boolean | undefined;
  canApprove: boolean;
  canReject: boolean;
  busy: boolean;
  onApprove(comment: string): void;
  onReject(comment: string): void;
}) {
  const id = useId();
  const [comment, setComment] = useState('');
  const [open, setOpen] = useState(!props.compact);
  const input = useRef<HTMLTextAreaElement>(null);
  if (!open)
    return (
      <button
        type="button"
        className="btn btn-small"
        onClick={() => {
          setOpen(true);
          setTimeout(() => input.current?.focus(), 0);
        }}
      >
        Decide…
      </button>
    );
  return (
    // Not a <form>: the reject confirmation is a dialog with a form of its own, and forms do not nest.
    <div className="decision-form" role="group" aria-label="Approval decision">
      <label htmlFor={`${id}-comment`}>Comment</label>
      <textarea
        id={`${id}-comment`}
        ref={input}
        rows={props.compact ? 1 : 2}
        maxLength={2000}
        value={comment}
        onChange={(e) => setComment(e.target.value)}
        placeholder="Why (shown with the decision)"
      />
      <div className="decision-buttons">
        {props.canApprove ? (
          <button
            type="button"
            className="btn btn-primary"
            disabled={props.busy}
            onClick={() => props.onApprove(comment.trim())}
          >
            Approve
          </button>
        ) : null}
        {props.canReject ? (
          <ConfirmButton
            question="Reject this run?"
            detail={
              comment.trim() ? (
                <p>
                  It finishes rejected and never runs. Your comment: <q>{comment.trim()}</q>
                </p>
              ) : (
                'It finishes rejected and never runs.'
              )
            }
            confirmLabel="Reject run"
            disabled={props.busy}
            onConfirm={() => props.onReject(comment.trim())}
          >
            Reject
          </ConfirmButton>
        ) : null}
      </div>
    </div>
  );
}
