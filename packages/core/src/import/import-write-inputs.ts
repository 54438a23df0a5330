// Writers for credentials, projects, inventories and inventory sources. Nothing here reaches the network: projects
// are stored never synced, sources never refreshed.
import {
  DEFAULT_HOST_KEY_CHECKING,
  CREDENTIAL_REQUIRED_SECRET,
  CREDENTIAL_SECRET_INPUTS,
  CredentialCreateBody,
  type CredentialType,
  InventoryBody,
  InventorySourceBody,
  ProjectCreateBody,
} from '@baton/contracts';
import { grantCreatorManage } from '../authz/authorize.js';
import { newId } from '../common/ids.js';
import { lacksRequiredSecret } from '../credentials/credential.service.js';
import { openSealedJson } from '../crypto/secret-box.js';
import { storeInventoryContent } from '../inventories/inventory.service.js';
import { PROJECT_CREDENTIAL_TYPES } from '../projects/project.service.js';
import type { PlannedCredential, PlannedInventory, PlannedInventorySource, PlannedProject } from './import-plan.js';
import { audit, checkBody, refused, type Writer } from './import-write.js';

type Inputs = Record<string, unknown>;

/** Stand-ins for the secret each type requires, so the rest of the inputs can be checked by the create schema. */
const REQUIRED_SECRET_STAND_IN: Record<CredentialType, unknown> = {
  ssh_key: 'stand-in',
  vault_password: 'stand-in',
  env: { STAND_IN: 'stand-in' },
  token: 'stand-in',
  become_password: 'stand-in',
  registry: 'stand-in',
  galaxy: 'stand-in',
};

interface CredentialBody {
  name: string;
  type: CredentialType;
  description: string | null;
  publicInputs: Inputs;
  secretInputs: Inputs;
}

export const credentialWriter: Writer<PlannedCredential, CredentialBody> = {
  check(o, name) {
    const secretNames = new Set(CREDENTIAL_SECRET_INPUTS[o.type] ?? []);
    const stray = Object.keys(o.inputs).find((k) => secretNames.has(k));
    if (stray) return refused(`inputs.${stray} is secret and cannot come from an export`);
    const secretInputs = o.secret_inputs ?? {};
    const standIn = { [CREDENTIAL_REQUIRED_SECRET[o.type]]: REQUIRED_SECRET_STAND_IN[o.type] };
    const checked = checkBody(CredentialCreateBody, {
      name,
      type: o.type,
      ...(o.description ? { description: o.description } : {}),
      inputs: { ...standIn, ...o.inputs, ...secretInputs },
    });
    if (!checked.ok) return checked;
    return {
      ok: true,
      body: { name, type: o.type, description: o.description || null, publicInputs: o.inputs, secretInputs },
    };
  },
  async insert(w, b) {
    const id = newId('cred', w.now.getTime());
    await w.tx.credentials.insert({
      id,
      name: b.name,
      type: b.type,
      description: b.description,
      public_inputs: b.publicInputs as Record<string, string>,
      secret_inputs_enc: w.keyring.encrypt(JSON.stringify(b.secretInputs)),
      created_by: w.importer.id,
      created_at: w.at,
      updated_at: w.at,
    });
    await grantCreatorManage(w.tx.grants, w.importer, id, w.now);
    const missing = lacksRequiredSecret(b.type, b.secretInputs)
      ? `, without its ${CREDENTIAL_REQUIRED_SECRET[b.type]}`
      : '';
    await audit(w, 'credential.create', id, `imported ${b.type} credential ${b.name} from ${w.source}${missing}`);
    return id;
  },
  /** Overwrites description and the non-secret inputs; stored secrets are kept (the export has none worth more). */
  async update(w, id, b) {
    const row = await w.tx.credentials.findById(id);
    if (!row) return 'it disappeared during the import';
    if (row.type !== b.type) return `it exists as a ${row.type} credential, and a credential never changes type`;
    const stored = openSealedJson<Inputs>(w.keyring, row.secret_inputs_enc);
    const secrets = lacksRequiredSecret(b.type, stored) ? { ...stored, ...b.secretInputs } : stored;
    await w.tx.credentials.update(id, {
      description: b.description,
      public_inputs: b.publicInputs as Record<string, string>,
      secret_inputs_enc: w.keyring.encrypt(JSON.stringify(secrets)),
      updated_at: w.at,
    });
    await audit(w, 'credential.update', id, `updated ${b.type} credential ${b.name} from ${w.source} (secrets kept)`);
    return undefined;
  },
};

interface ProjectBody {
  name: string;
  git_url: string;
  branch: string;
  credential_id: string | null;
}

export const projectWriter: Writer<PlannedProject, ProjectBody> = {
  async check(o, name, ids, w) {
    const credentialId = o.credential ? ids.get(o.credential)! : null;
    if (credentialId) {
      const cred = await w.tx.credentials.findById(credentialId);
      if (!cred || !(PROJECT_CREDENTIAL_TYPES as readonly string[]).includes(cred.type))
        return refused(`its credential must be a token or ssh_key credential, not ${cred?.type ?? 'missing'}`);
    }
    const checked = checkBody(ProjectCreateBody, {
      name,
      git_url: o.git_url,
      branch: o.branch,
      ...(credentialId ? { credential_id: credentialId } : {}),
    });
    return checked.ok ? { ok: true, body: { ...checked.body, credential_id: credentialId } } : checked;
  },
  async insert(w, b) {
    const id = newId('prj', w.now.getTime());
    await w.tx.projects.insert({
      id,
      ...b,
      host_key_checking: DEFAULT_HOST_KEY_CHECKING,
      galaxy_credential_id: null,
      last_commit: null,
      synced_at: null,
      created_by: w.importer.id,
      created_at: w.at,
      updated_at: w.at,
    });
    await grantCreatorManage(w.tx.grants, w.importer, id, w.now);
    await audit(w, 'project.create', id, `imported project ${b.name} (${b.branch}) from ${w.source}, not synced yet`);
    return id;
  },
  async update(w, id, b) {
    const row = await w.tx.projects.findById(id);
    if (!row) return 'it disappeared during the import';
    const retarget = row.git_url !== b.git_url || row.branch !== b.branch;
    await w.tx.projects.update(id, {
      git_url: b.git_url,
      branch: b.branch,
      credential_id: b.credential_id,
      // Another repository or branch: the commit of the last sync no longer says anything.
      ...(retarget ? { last_commit: null, synced_at: null } : {}),
      updated_at: w.at,
    });
    await audit(
      w,
      'project.update',
      id,
      `updated project ${b.name} from ${w.source}${retarget ? ', not synced since' : ''}`,
    );
    return undefined;
  },
};

export const inventoryWriter: Writer<PlannedInventory, { name: string; content: string }> = {
  check(o, name, _ids, w) {
    if (!w.inventories.has(o.key)) return refused('ansible-inventory could not read its content');
    return checkBody(InventoryBody, { name, content: o.content });
  },
  async insert(w, b, o) {
    const parsed = w.inventories.get(o.key)!;
    const id = newId('inv', w.now.getTime());
    await w.tx.inventories.insert({
      id,
      name: b.name,
      format: parsed.format,
      content: b.content,
      host_key_checking: DEFAULT_HOST_KEY_CHECKING,
      groups: parsed.groups,
      host_count: parsed.hosts.length,
      created_by: w.importer.id,
      created_at: w.at,
      updated_at: w.at,
    });
    await w.tx.inventories.replaceHosts(
      id,
      parsed.hosts.map((h) => ({ host: h.name, groups: h.groups })),
    );
    await grantCreatorManage(w.tx.grants, w.importer, id, w.now);
    await audit(
      w,
      'inventory.create',
      id,
      `imported inventory ${b.name} (${parsed.hosts.length} hosts) from ${w.source}`,
    );
    return id;
  },
  async update(w, id, b, o) {
    const parsed = w.inventories.get(o.key)!;
    await storeInventoryContent(w.tx.inventories, id, { text: b.content, parsed }, w.at);
    await audit(
      w,
      'inventory.update',
      id,
      `updated inventory ${b.name} (${parsed.hosts.length} hosts) from ${w.source}`,
    );
    return undefined;
  },
};

interface SourceBody {
  name: string;
  kind: 'script' | 'plugin';
  inventory_id: string;
  project_id: string;
  path: string;
}

export const inventorySourceWriter: Writer<PlannedInventorySource, SourceBody> = {
  check(o, name, ids) {
    const body = {
      name,
      kind: o.source_kind,
      inventory_id: ids.get(o.inventory)!,
      project_id: ids.get(o.project)!,
      path: o.path,
    };
    const checked = checkBody(InventorySourceBody, body);
    return checked.ok ? { ok: true, body } : checked;
  },
  async insert(w, b) {
    const id = newId('src', w.now.getTime());
    await w.tx.inventorySources.insert({
      id,
      ...b,
      url: null,
      credential_id: null,
      refresh_interval_s: null,
      refreshed_at: null,
      host_count: null,
      last_error: null,
      created_by: w.importer.id,
      created_at: w.at,
      updated_at: w.at,
    });
    await grantCreatorManage(w.tx.grants, w.importer, id, w.now);
    await audit(
      w,
      'inventory_source.create',
      id,
      `imported ${b.kind} source ${b.name} (${b.path}) from ${w.source}, not refreshed yet`,
    );
    return id;
  },
  async update(w, id, b) {
    await w.tx.inventorySources.update(id, {
      kind: b.kind,
      inventory_id: b.inventory_id,
      project_id: b.project_id,
      path: b.path,
      updated_at: w.at,
    });
    await audit(w, 'inventory_source.update', id, `updated source ${b.name} from ${w.source}`);
    return undefined;
  },
};
