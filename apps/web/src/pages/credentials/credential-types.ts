// Each credential type's inputs, as the API defines them (CREDENTIAL_INPUTS in contracts): which are secret
// (write-only: never shown, blank on edit means "keep"), which are optional, and how each is entered.
import type { CredentialType } from '@baton/contracts';

export interface InputSpec {
  name: string;
  label: string;
  secret: boolean;
  optional: boolean;
  control: 'text' | 'password' | 'textarea' | 'url';
  hint?: string;
}

export interface TypeSpec {
  label: string;
  /** what it is for */
  purpose: string;
  /** env keeps its variables in rows instead */
  inputs: InputSpec[];
}

export const CREDENTIAL_TYPE_SPECS: Record<CredentialType, TypeSpec> = {
  ssh_key: {
    label: 'SSH key',
    purpose: 'Connects to hosts over ssh, or reaches a git repository over ssh.',
    inputs: [
      {
        name: 'private_key',
        label: 'Private key',
        secret: true,
        optional: false,
        control: 'textarea',
        hint: 'PEM or OpenSSH, including the BEGIN and END lines.',
      },
      {
        name: 'passphrase',
        label: 'Passphrase',
        secret: true,
        optional: true,
        control: 'password',
        hint: 'Only when the key is encrypted.',
      },
      { name: 'username', label: 'Username', secret: false, optional: true, control: 'text', hint: 'The remote user.' },
    ],
  },
  vault_password: {
    label: 'Vault password',
    purpose: 'Decrypts ansible-vault content.',
    inputs: [
      { name: 'password', label: 'Vault password', secret: true, optional: false, control: 'password' },
      {
        name: 'vault_id',
        label: 'Vault id',
        secret: false,
        optional: true,
        control: 'text',
        hint: 'A label such as prod, for content encrypted with --vault-id.',
      },
    ],
  },
  env: {
    label: 'Environment variables',
    purpose: 'Variables set in the playbook’s environment (API keys for modules, cloud credentials).',
    inputs: [],
  },
  token: {
    label: 'Token',
    purpose: 'A token, e.g. for git over HTTPS or an inventory URL (sent as a bearer token).',
    inputs: [{ name: 'token', label: 'Token', secret: true, optional: false, control: 'password' }],
  },
  become_password: {
    label: 'Become password',
    purpose: 'The password for privilege escalation (sudo, su…).',
    inputs: [
      { name: 'password', label: 'Become password', secret: true, optional: false, control: 'password' },
      {
        name: 'method',
        label: 'Become method',
        secret: false,
        optional: true,
        control: 'text',
        hint: 'sudo, su or a plugin name such as community.general.doas.',
      },
      { name: 'user', label: 'Become user', secret: false, optional: true, control: 'text' },
    ],
  },
  registry: {
    label: 'Container registry',
    purpose: 'Signs in to a container registry.',
    inputs: [
      {
        name: 'url',
        label: 'Registry URL',
        secret: false,
        optional: false,
        control: 'url',
        hint: 'http(s), without a user or password in it.',
      },
      { name: 'username', label: 'Username', secret: false, optional: false, control: 'text' },
      { name: 'password', label: 'Password', secret: true, optional: false, control: 'password' },
    ],
  },
  galaxy: {
    label: 'Galaxy server',
    purpose: 'The Ansible Galaxy or Automation Hub server a project’s requirements install from.',
    inputs: [
      {
        name: 'url',
        label: 'Server URL',
        secret: false,
        optional: false,
        control: 'url',
        hint: 'The server’s API root, http(s), e.g. https://galaxy.example.com/api/ (no user or password in it).',
      },
      {
        name: 'token',
        label: 'Token',
        secret: true,
        optional: false,
        control: 'password',
        hint: 'The API token ansible-galaxy sends to the server.',
      },
    ],
  },
};

export const CREDENTIAL_TYPES = Object.keys(CREDENTIAL_TYPE_SPECS) as CredentialType[];

/** The env variable names a credential has set (`secret_fields` holds them as `variables.NAME`). */
export function envNames(secretFields: string[]): string[] {
  return secretFields.filter((f) => f.startsWith('variables.')).map((f) => f.slice('variables.'.length));
}
