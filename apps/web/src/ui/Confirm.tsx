// Destructive actions ask first, in a modal <dialog> (focus stays inside; Escape cancels).
import { type ReactNode, useRef } from 'react';

interface ConfirmButtonProps {
  /** the button's text, e.g. "Delete" */
  children: ReactNode;
  /** the button's accessible name when its text alone is ambiguous (one "Forget" per row): starts with the text */
  label?: string;
  /** what the dialog asks, e.g. "Delete the project web?" */
  question: string;
  /** more about what happens */
  detail?: ReactNode;
  /** the dialog's confirming button text (defaults to the button's) */
  confirmLabel?: string;
  onConfirm(): void;
  disabled?: boolean;
  danger?: boolean;
}

export function ConfirmButton({
  children,
  label,
  question,
  detail,
  confirmLabel,
  onConfirm,
  disabled,
  danger = true,
}: ConfirmButtonProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  return (
    <>
      <button
        type="button"
        className={danger ? 'btn btn-danger' : 'btn'}
        disabled={disabled}
        aria-label={label}
        onClick={() => dialog.current?.showModal()}
      >
        {children}
      </button>
      <dialog ref={dialog} className="dialog" aria-label={question}>
        <form
          method="dialog"
          onSubmit={(e) => {
            const submitter = (e.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
            if (submitter?.value === 'confirm') onConfirm();
          }}
        >
          <h2>{question}</h2>
          {detail ? <div className="dialog-detail">{detail}</div> : null}
          <div className="form-actions">
            <button type="submit" value="cancel" className="btn" autoFocus>
              Cancel
            </button>
            <button type="submit" value="confirm" className={danger ? 'btn btn-danger' : 'btn btn-primary'}>
              {confirmLabel ?? children}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}
