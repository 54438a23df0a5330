// The role select of the user forms, with what the chosen role may do as its hint.
import type { Role } from '@baton/contracts';
import { Field } from '../../ui/forms';
import { ROLE_WORDS } from './roles';

export function RoleField({ value, onChange, error }: { value: Role; onChange(role: Role): void; error: unknown }) {
  return (
    <Field label="Role" name="role" error={error} hint={ROLE_WORDS[value]}>
      {(p) => (
        <select {...p} value={value} onChange={(e) => onChange(e.target.value as Role)}>
          <option value="viewer">viewer</option>
          <option value="operator">operator</option>
          <option value="admin">admin</option>
        </select>
      )}
    </Field>
  );
}
