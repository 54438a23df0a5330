// The "Host key checking" select of the inventory and project forms; the hint explains each policy in a line.
import type { HostKeyChecking } from '@baton/contracts';
import { Field } from '../../ui/forms';
import { HOST_KEY_CHECKING, HOST_KEY_CHECKING_ORDER } from './host-key-checking';
import './known-hosts.css';

export function HostKeyCheckingField({
  value,
  onChange,
  error,
  what,
}: {
  value: HostKeyChecking;
  onChange(value: HostKeyChecking): void;
  error: unknown;
  /** whose keys ssh checks, e.g. "its hosts’ SSH host keys" */
  what: string;
}) {
  return (
    <Field
      label="Host key checking"
      name="host_key_checking"
      error={error}
      hint={
        <>
          How ssh checks {what}.
          <ul className="policy-list">
            {HOST_KEY_CHECKING_ORDER.map((c) => (
              <li key={c} className={c === value ? 'policy-chosen' : undefined} data-policy={c}>
                <strong>{HOST_KEY_CHECKING[c].label}:</strong> {HOST_KEY_CHECKING[c].explain}
              </li>
            ))}
          </ul>
        </>
      }
    >
      {(p) => (
        <select {...p} value={value} onChange={(e) => onChange(e.target.value as HostKeyChecking)}>
          {HOST_KEY_CHECKING_ORDER.map((c) => (
            <option key={c} value={c}>
              {HOST_KEY_CHECKING[c].label}
              {c === 'accept_new' ? ' (default)' : ''}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
