import {
  type Credential,
  CREDENTIAL_INPUTS,
  CREDENTIAL_REQUIRED_SECRET,
  CREDENTIAL_SECRET_INPUTS,
  type CredentialCreateBody,
  type CredentialInputs,
  type CredentialType,
  type CredentialUpdateBody,
  type GrantLevel,
} from '@baton/contracts';
import {
  type AuditRepo,
  type CredentialRepo,
  type CredentialRow,
  DuplicateKeyError,
  type GrantRepo,
  type PageQuery,
} from '@baton/db';
import { recordAudit } from '../audit/audit.chain.js';
import { grantCreatorManage, notFound } from '../authz/authorize.js';
import type { Authorizer, Principal } from '../authz/authorize.js';
import { type Clock, iso } from '../common/clock.js';
import { ConflictError, type FieldError, UnprocessableError, ValidationError } from '../common/errors.js';
import { inUseConflict } from '../authz/in-use.js';
import { newId } from '../common/ids.js';
import { type Page, toPage, visiblePageQuery } from '../common/paging.js';
import { type Keyring, openSealedJson } from '../crypto/secret-box.js';
import { checkSshPrivateKey, SshKeyError } from './ssh-key.js';

/** A credential with every input in clear text. Internal only: never put one in a response, a log or an event. */
export type RevealedCredential = { id: string; name: string } & CredentialInputs;

/** Something that references a credential and so keeps it from being deleted. */
export interface CredentialUse {
  kind: string;
  id: string;
  name: string;
}

type TxRepos = {
  credentials: Pick<CredentialRepo, 'insert' | 'findById' | 'update' | 'delete'>;
  grants: Pick<GrantRepo, 'insert' | 'deleteMentioning'>;
  audit: Pick<AuditRepo, 'append'>;
};

type Inputs = Record<string, unknown>;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Splits validated inputs into what is stored in clear (all strings) and what is sealed. */
function split(type: CredentialType, inputs: Inputs): { publicInputs: Record<string, string>; secretInputs: Inputs } {
  const secretNames = new Set(CREDENTIAL_SECRET_INPUTS[type]);
  const publicInputs: Record<string, string> = {};
  const secretInputs: Inputs = {};
  for (const [k, v] of Object.entries(inputs)) {
    if (v === undefined) continue;
    if (secretNames.has(k)) secretInputs[k] = v;
    else publicInputs[k] = String(v);
  }
  return { publicInputs, secretInputs };
}

/** Names of the secret inputs that are set; a map (env variables) lists its keys as `field.KEY`. */
function secretFieldNames(secretInputs: Inputs): string[] {
  return Object.keys(secretInputs)
    .sort()
    .flatMap((k) => {
      const v = secretInputs[k];
      return isPlainObject(v)
        ? Object.keys(v)
            .sort()
            .map((n) => `${k}.${n}`)
        : [k];
    });
}

/** Whether the secret input the type cannot work without is unset (a credential imported without its secrets). */
export function lacksRequiredSecret(type: CredentialType, secretInputs: Inputs): boolean {
  const value = secretInputs[CREDENTIAL_REQUIRED_SECRET[type]];
  return value === undefined || value === '' || (isPlainObject(value) && Object.keys(value).length === 0);
}

/** Zod issues of the inputs schema as field errors under `body.inputs` (messages name rules, never values). */
function inputErrors(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): FieldError[] {
  return issues.map((i) => ({ path: ['body', 'inputs', ...i.path.map(String)].join('.'), message: i.message }));
}

/** The full check of one type's inputs: the schema, then for ssh keys a parse of the key itself. */
function validateInputs(type: CredentialType, inputs: unknown): Inputs {
  const parsed = CREDENTIAL_INPUTS[type].safeParse(inputs);
  if (!parsed.success) throw new ValidationError(`invalid ${type} inputs`, inputErrors(parsed.error.issues));
  const valid = parsed.data as Inputs;
  if (type === 'ssh_key') {
    try {
      checkSshPrivateKey(valid.private_key as string, valid.passphrase as string | undefined);
    } catch (err) {
      if (err instanceof SshKeyError)
        throw new ValidationError('invalid ssh_key inputs', [
          { path: `body.inputs.${err.field}`, message: err.message },
        ]);
      throw err;
    }
  }
  return valid;
}

/**
 * An update's inputs merged over the stored ones: given inputs replace, null clears, omitted ones stay.
 * Clearing a required input is refused here, with a clearer message than "expected string".
 */
function mergeInputs(type: CredentialType, stored: Inputs, patch: Inputs): Inputs {
  const shape = CREDENTIAL_INPUTS[type].shape as Record<
    string,
    { safeParse(v: unknown): { success: boolean } } | undefined
  >;
  const uncleared = Object.entries(patch)
    .filter(([k, v]) => v === null && Object.hasOwn(shape, k) && !shape[k]!.safeParse(undefined).success)
    .map(([k]) => ({
      path: `body.inputs.${k}`,
      message: `${k} is required for a ${type} credential and cannot be cleared`,
    }));
  if (uncleared.length) throw new ValidationError(`invalid ${type} inputs`, uncleared);
  // fromEntries defines own properties, so a key such as __proto__ stays a key (and the strict schema refuses it).
  return Object.fromEntries([
    ...Object.entries(stored).filter(([k]) => !Object.hasOwn(patch, k)),
    ...Object.entries(patch).filter(([, v]) => v !== null),
  ]);
}

export function createCredentialService(deps: {
  credentials: Pick<CredentialRepo, 'findById' | 'list'>;
  transaction: <T>(fn: (r: TxRepos) => Promise<T>) => Promise<T>;
  authz: Pick<Authorizer, 'requireCreator' | 'requireVisible' | 'visibleIds' | 'levelOn'>;
  keyring: Pick<Keyring, 'encrypt' | 'decrypt'>;
  clock: Clock;
  /** What references a credential (projects, inventory sources, templates…). Called outside any transaction. */
  usedBy: (credentialId: string) => Promise<CredentialUse[]>;
}) {
  const seal = (secretInputs: Inputs): string => deps.keyring.encrypt(JSON.stringify(secretInputs));
  const open = (row: CredentialRow): Inputs => openSealedJson<Inputs>(deps.keyring, row.secret_inputs_enc);

  function toView(row: CredentialRow, secretInputs: Inputs = open(row)): Credential {
    return {
      id: row.id,
      name: row.name,
      type: row.type as CredentialType,
      description: row.description,
      inputs: row.public_inputs,
      secret_fields: secretFieldNames(secretInputs),
      needs_secret: lacksRequiredSecret(row.type as CredentialType, secretInputs),
      created_by: row.created_by,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  /** Its inputs in clear; 422 (at `field`) while the secret its type needs is missing (imported without it). */
  function revealRow(row: CredentialRow, field = 'credential_id'): RevealedCredential {
    const secrets = open(row);
    if (lacksRequiredSecret(row.type as CredentialType, secrets)) {
      const message = `credential ${row.name} (${row.id}) has no ${CREDENTIAL_REQUIRED_SECRET[row.type as CredentialType]} yet (imported without its secret): set it with PUT /v1/credentials/${row.id}`;
      throw new UnprocessableError(message, [{ path: field, message }]);
    }
    return {
      id: row.id,
      name: row.name,
      type: row.type,
      inputs: { ...row.public_inputs, ...secrets },
    } as RevealedCredential;
  }

  /** The credential if the caller holds `need` on it; unknown and invisible answer the same 404. */
  async function visible(p: Principal, id: string, need: GrantLevel): Promise<CredentialRow> {
    return deps.authz.requireVisible(p, need, { kind: 'credential', id, row: await deps.credentials.findById(id) });
  }

  const duplicateName = (name: string) => new ConflictError(`a credential named ${name} already exists`);

  return {
    async create(p: Principal, body: CredentialCreateBody): Promise<Credential> {
      deps.authz.requireCreator(p);
      const { publicInputs, secretInputs } = split(body.type, validateInputs(body.type, body.inputs));
      const now = deps.clock();
      const row: CredentialRow = {
        id: newId('cred', now.getTime()),
        name: body.name,
        type: body.type,
        description: body.description ?? null,
        public_inputs: publicInputs,
        secret_inputs_enc: seal(secretInputs),
        created_by: p.id,
        created_at: iso(now),
        updated_at: iso(now),
      };
      try {
        await deps.transaction(async (r) => {
          await r.credentials.insert(row);
          await grantCreatorManage(r.grants, p, row.id, now);
          await recordAudit(
            r.audit,
            {
              actor: p.id,
              action: 'credential.create',
              object: row.id,
              summary: `created ${row.type} credential ${row.name}`,
            },
            deps.clock,
          );
        });
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw duplicateName(body.name);
        throw err;
      }
      return toView(row, secretInputs);
    },

    /** Admins see every credential; everyone else those they (or their teams) hold a grant on. */
    async list(p: Principal, page: PageQuery & { cursor?: string | undefined }): Promise<Page<Credential>> {
      const rows = await deps.credentials.list(visiblePageQuery(page, await deps.authz.visibleIds(p, 'cred')));
      return toPage(
        rows.map((row) => toView(row)),
        page.limit,
        (c) => c.id,
      );
    },

    async get(p: Principal, id: string): Promise<Credential> {
      return toView(await visible(p, id, 'use'));
    },

    async update(p: Principal, id: string, body: CredentialUpdateBody): Promise<Credential> {
      const row = await visible(p, id, 'manage');
      const type = row.type as CredentialType;
      if (body.type !== undefined && body.type !== type) {
        throw new ValidationError('a credential never changes type; create a new one instead', [
          { path: 'body.type', message: `must be ${type} (this credential's type) or left out` },
        ]);
      }
      const storedSecrets = open(row);
      const stored: Inputs = { ...row.public_inputs, ...storedSecrets };
      const patch = body.inputs ?? {};
      const inputs = validateInputs(type, mergeInputs(type, stored, patch));
      const { publicInputs, secretInputs } = split(type, inputs);

      // The audit names what changed, never a value: input names compared in memory, secrets included.
      const changed = [
        ...(body.name !== undefined && body.name !== row.name ? [`name (was ${row.name})`] : []),
        ...(body.description !== undefined && body.description !== row.description ? ['description'] : []),
        ...Object.keys(patch)
          .filter((k) => JSON.stringify(stored[k]) !== JSON.stringify(inputs[k]))
          .map((k) => (inputs[k] === undefined ? `inputs.${k} cleared` : `inputs.${k}`)),
      ];
      const next: CredentialRow = {
        ...row,
        name: body.name ?? row.name,
        description: body.description === undefined ? row.description : body.description,
        public_inputs: publicInputs,
        secret_inputs_enc: seal(secretInputs),
        updated_at: iso(deps.clock()),
      };
      try {
        await deps.transaction(async (r) => {
          const { name, description, public_inputs, secret_inputs_enc, updated_at } = next;
          const applied = await r.credentials.update(
            id,
            { name, description, public_inputs, secret_inputs_enc, updated_at },
            { ifSecretIs: row.secret_inputs_enc },
          );
          if (!applied) {
            if (!(await r.credentials.findById(id))) throw notFound('credential', id);
            throw new ConflictError(`credential ${id} was changed by someone else meanwhile; fetch it and try again`);
          }
          const summary = `updated ${type} credential ${next.name}: ${changed.length ? changed.join(', ') : 'no changes'}`;
          await recordAudit(r.audit, { actor: p.id, action: 'credential.update', object: id, summary }, deps.clock);
        });
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw duplicateName(next.name);
        throw err;
      }
      return toView(next, secretInputs);
    },

    /** 409 while anything references it, naming what does; otherwise deletes it and every grant on it. */
    async remove(p: Principal, id: string): Promise<void> {
      const row = await visible(p, id, 'manage');
      // Asked before the transaction: on SQLite a query outside it would wait forever for its connection.
      const uses = await deps.usedBy(id);
      const conflict = await inUseConflict(p, 'credential', uses, deps.authz);
      if (conflict) throw conflict;
      await deps.transaction(async (r) => {
        await r.grants.deleteMentioning(id);
        const result = await r.credentials.delete(id);
        if (result === 'missing') throw notFound('credential', id);
        // A reference added since usedBy answered: the foreign key still refuses the delete.
        if (result === 'in_use') throw new ConflictError(`credential ${id} is still referenced; remove its uses first`);
        await recordAudit(
          r.audit,
          {
            actor: p.id,
            action: 'credential.delete',
            object: id,
            summary: `deleted ${row.type} credential ${row.name}`,
          },
          deps.clock,
        );
      });
    },

    /** INTERNAL (never over HTTP): the credential with its secrets in clear, for building a run. */
    async reveal(id: string): Promise<RevealedCredential> {
      const row = await deps.credentials.findById(id);
      if (!row) throw notFound('credential', id);
      return revealRow(row);
    },

    /**
     * INTERNAL: for a domain that attaches a credential to something (a project's git token, a template's
     * ssh key…). 404 if the caller cannot see it, 403 without `use`, 400 at `field` when its type is not
     * one of `allowed`.
     */
    async requireUsable(
      p: Principal,
      id: string,
      field: string,
      allowed: readonly CredentialType[],
    ): Promise<RevealedCredential> {
      const row = await visible(p, id, 'use');
      if (!allowed.includes(row.type as CredentialType)) {
        const message = `must be a credential of type ${allowed.join(' or ')}`;
        throw new ValidationError(`${field} ${message}`, [{ path: field, message }]);
      }
      return revealRow(row, field);
    },
  };
}
export type CredentialService = ReturnType<typeof createCredentialService>;
