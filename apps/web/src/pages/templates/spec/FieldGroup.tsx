// A group of controls under one legend (checkboxes, radios) with the API's messages for its path, like <Field>.
import type { ReactNode } from 'react';
import { asApiError, FieldMessages } from '../../../ui/forms';

export function FieldGroup({
  legend,
  name,
  error,
  hint,
  localErrors = [],
  children,
}: {
  legend: string;
  name: string;
  error?: unknown;
  hint?: ReactNode;
  localErrors?: string[];
  children: ReactNode;
}) {
  const messages = [...localErrors, ...(asApiError(error)?.fieldErrors(name) ?? [])];
  return (
    <fieldset className={`field-group${messages.length ? ' field-invalid' : ''}`} data-field={name}>
      <legend>{legend}</legend>
      {children}
      {hint ? <div className="hint">{hint}</div> : null}
      <FieldMessages messages={messages} />
    </fieldset>
  );
}
