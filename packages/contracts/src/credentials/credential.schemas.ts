import { z } from 'zod';
import { idOf, NO_CONTROL_CHARACTERS, ObjectName, Timestamp } from '../common/common.schemas.js';
import { tryParseUrl } from '../network/safe-url.js';
import { ENV_NAME_PATTERN, reservedEnvNameReason } from './reserved-env-names.js';

/** The kinds of credential Baton stores, each with its own inputs (below). */
export const CREDENTIAL_TYPES = [
  'ssh_key',
  'vault_password',
  'env',
  'token',
  'become_password',
  'registry',
  'galaxy',
] as const;
export const CredentialType = z.enum(CREDENTIAL_TYPES);
export type CredentialType = z.infer<typeof CredentialType>;

/**
 * Which inputs of each type are secret: these are sealed under the master key and never returned; every
 * other input is stored and returned as is. (For `env`, every variable value is secret; responses name
 * the variables only, as `variables.NAME`.)
 */
export const CREDENTIAL_SECRET_INPUTS: Readonly<Record<CredentialType, readonly string[]>> = {
  ssh_key: ['private_key', 'passphrase'],
  vault_password: ['password'],
  env: ['variables'],
  token: ['token'],
  become_password: ['password'],
  registry: ['password'],
  galaxy: ['token'],
};

/**
 * The secret input each type cannot work without. A credential imported from another tool arrives without it (exports
 * never carry secrets): it is stored, shown with `needs_secret: true`, and refused for use until the input is set.
 */
export const CREDENTIAL_REQUIRED_SECRET: Readonly<Record<CredentialType, string>> = {
  ssh_key: 'private_key',
  vault_password: 'password',
  env: 'variables',
  token: 'token',
  become_password: 'password',
  registry: 'password',
  galaxy: 'token',
};

export { ENV_NAME_PATTERN, isReservedEnvName, reservedEnvNameReason } from './reserved-env-names.js';

export const CREDENTIAL_LIMITS = {
  privateKey: 16_384, // an 8192-bit RSA key in encrypted PEM is about 6.5 kB
  passphrase: 1_024,
  password: 4_096,
  token: 8_192,
  envValue: 32_768,
  envVariables: 200,
  envName: 128,
} as const;

// eslint-disable-next-line no-control-regex -- rejecting control characters and whitespace is the point
const NO_SPACE_OR_CONTROL = /^[^\s\u0000-\u001f\u007f]+$/;

/** Secrets are taken byte for byte (no trimming: a password may end in a space), only bounded in size. */
const secret = (max: number) => z.string().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);
const login = z
  .string()
  .min(1)
  .max(256)
  .regex(NO_SPACE_OR_CONTROL, 'must not contain whitespace or control characters');

const EnvName = z
  .string()
  .max(CREDENTIAL_LIMITS.envName, `a variable name is at most ${CREDENTIAL_LIMITS.envName} characters`)
  .regex(ENV_NAME_PATTERN, 'a variable name is letters, digits and _, not starting with a digit')
  .superRefine((name, ctx) => {
    const why = reservedEnvNameReason(name);
    if (why !== undefined)
      ctx.addIssue({ code: 'custom', message: `${name.slice(0, CREDENTIAL_LIMITS.envName)} is reserved: ${why}` });
  });

export const SshKeyInputs = z.strictObject({
  private_key: secret(CREDENTIAL_LIMITS.privateKey).meta({
    description: 'PEM (RSA, EC, PKCS#8; encrypted or not) or OpenSSH private key; secret',
  }),
  passphrase: secret(CREDENTIAL_LIMITS.passphrase)
    .optional()
    .meta({ description: 'needed when the key is encrypted; secret' }),
  username: login.optional().meta({ description: 'remote user to connect as' }),
});
export const VaultPasswordInputs = z.strictObject({
  password: secret(CREDENTIAL_LIMITS.password).meta({ description: 'secret' }),
  vault_id: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9_.-]+$/, 'a vault id label is letters, digits, _, . and -')
    .optional(),
});
export const EnvInputs = z.strictObject({
  variables: z
    .record(
      EnvName,
      z.string().max(CREDENTIAL_LIMITS.envValue, `a value is at most ${CREDENTIAL_LIMITS.envValue} characters`),
      {
        // The record's own message ("Invalid key in record") would not say what is wrong with the name.
        error: (iss) => (iss.code === 'invalid_key' ? iss.issues.map((i) => i.message).join('; ') : undefined),
      },
    )
    .refine((v) => Object.keys(v).length >= 1, 'set at least one variable')
    .refine(
      (v) => Object.keys(v).length <= CREDENTIAL_LIMITS.envVariables,
      `at most ${CREDENTIAL_LIMITS.envVariables} variables`,
    )
    .meta({ description: 'NAME → value; the values are secret' }),
});
export const TokenInputs = z.strictObject({
  token: secret(CREDENTIAL_LIMITS.token).meta({ description: 'e.g. for git over HTTPS; secret' }),
});
export const BecomePasswordInputs = z.strictObject({
  password: secret(CREDENTIAL_LIMITS.password).meta({ description: 'secret' }),
  method: z
    .string()
    .max(128)
    .regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/, 'a become plugin name such as sudo, su or community.general.doas')
    .optional(),
  user: login.optional().meta({ description: 'user to become' }),
});
const ServerUrl = z
  .string()
  .max(2048)
  .regex(NO_CONTROL_CHARACTERS, 'must not contain control characters')
  .refine((u) => {
    const url = tryParseUrl(u);
    // Credentials inside the URL would be stored and returned in clear text: they belong in username/password.
    return (
      url !== undefined &&
      (url.protocol === 'https:' || url.protocol === 'http:') &&
      url.hostname !== '' &&
      url.username === '' &&
      url.password === ''
    );
  }, 'must be an http(s) URL without a user or password in it');
export const RegistryInputs = z.strictObject({
  url: ServerUrl,
  username: login,
  password: secret(CREDENTIAL_LIMITS.password).meta({ description: 'secret' }),
});
/** An Ansible Galaxy or Automation Hub server for a project's requirements (ansible-galaxy's server_list entry). */
export const GalaxyInputs = z.strictObject({
  url: ServerUrl.meta({ description: 'the server’s API root, e.g. https://galaxy.example.com/api/' }),
  token: secret(CREDENTIAL_LIMITS.token)
    .regex(NO_SPACE_OR_CONTROL, 'must not contain whitespace or control characters')
    .meta({ description: 'API token; secret' }),
});

/** The inputs schema of each type: create validates against it, and update validates the merged result. */
export const CREDENTIAL_INPUTS = {
  ssh_key: SshKeyInputs,
  vault_password: VaultPasswordInputs,
  env: EnvInputs,
  token: TokenInputs,
  become_password: BecomePasswordInputs,
  registry: RegistryInputs,
  galaxy: GalaxyInputs,
} as const satisfies Record<CredentialType, z.ZodType>;

/** A credential's type together with its fully decoded inputs, narrowed by `type`. */
export type CredentialInputs = {
  [K in CredentialType]: { type: K; inputs: z.output<(typeof CREDENTIAL_INPUTS)[K]> };
}[CredentialType];

const CredentialName = ObjectName;
const Description = z.string().trim().max(1000);
const createBody = <T extends CredentialType>(type: T) =>
  z.strictObject({
    name: CredentialName,
    type: z.literal(type),
    description: Description.optional(),
    inputs: CREDENTIAL_INPUTS[type],
  });

export const CredentialCreateBody = z
  .discriminatedUnion('type', [
    createBody('ssh_key'),
    createBody('vault_password'),
    createBody('env'),
    createBody('token'),
    createBody('become_password'),
    createBody('registry'),
    createBody('galaxy'),
  ])
  .meta({ id: 'CredentialCreate' });
export type CredentialCreateBody = z.output<typeof CredentialCreateBody>;

/**
 * Update: `name` and `description` replace; each input given replaces the stored one, an input set to null
 * clears it (only optional inputs can be cleared), and inputs left out keep their value. `env` variables
 * are one input: giving `variables` replaces the whole set. The type never changes: `type` may be sent,
 * but only with the current type.
 */
export const CredentialUpdateBody = z
  .strictObject({
    name: CredentialName.optional(),
    description: Description.nullable().optional(),
    type: CredentialType.optional().meta({
      description: 'must equal the current type: a credential never changes type',
    }),
    // Checked against the credential's type once it is merged with the stored inputs.
    inputs: z
      .record(z.string().max(64), z.unknown())
      .optional()
      .meta({ description: 'inputs to replace (null clears an optional one)' }),
  })
  // As every other update: an empty one is a mistake, not a change worth an audit entry.
  .refine((b) => Object.values(b).some((v) => v !== undefined), {
    message: 'give at least one of name, description, type, inputs',
  })
  .meta({ id: 'CredentialUpdate' });
export type CredentialUpdateBody = z.output<typeof CredentialUpdateBody>;

export const Credential = z
  .object({
    id: z.string(),
    name: z.string(),
    type: CredentialType,
    description: z.string().nullable(),
    inputs: z.record(z.string(), z.string()).meta({ description: 'the non-secret inputs only' }),
    secret_fields: z
      .array(z.string())
      .meta({ description: 'which secret inputs are set (for env: variables.NAME); never their values' }),
    needs_secret: z.boolean().meta({
      description:
        'true when the secret the type needs is not set (an imported credential): runs and projects refuse it until an update sets it',
    }),
    created_by: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Credential' });
export type Credential = z.infer<typeof Credential>;

/** Path parameters are well-formed ids: a malformed one is a 400 naming the parameter, never a database error. */
export const CredentialIdParams = z.strictObject({ id: idOf('cred') });
