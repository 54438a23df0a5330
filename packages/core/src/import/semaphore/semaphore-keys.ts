// Semaphore access keys → Baton credentials. A Semaphore key is typed by what it holds (`ssh`, `login_password`,
// `string`, `none`); a Baton credential by what it is for. So a key becomes one credential per use: a
// login_password key is a token where a repository uses it, a become password where an inventory becomes with it,
// a vault password (per vault id) where a template decrypts with it. The backup never carries the secrets: every
// credential lands in needs_secret.
import type { CredentialType, SemaphoreBackup } from '@baton/contracts';
import type { PlannedCredential } from '../import-plan.js';
import { batonName, planKey, skip, text, type MapContext } from './semaphore-context.js';

export type KeyUse =
  { as: 'repository' } | { as: 'login' } | { as: 'become' } | { as: 'vault'; vaultName?: string | null | undefined };

const VAULT_ID = /^[A-Za-z0-9_.-]{1,128}$/;

/** A credential made of a key: its Baton type and (for vault passwords) the vault id. */
interface Variant {
  id: string;
  type: CredentialType;
  label: string;
  vaultId?: string;
}

const SECRET_TYPES = new Set(['login_password', 'string']);

/** What this use of a key of this type becomes, or why it becomes nothing. */
function variantOf(keyType: string, use: KeyUse): Variant | { problem: string } {
  if (keyType === 'ssh') {
    if (use.as === 'repository' || use.as === 'login') return { id: 'ssh_key', type: 'ssh_key', label: 'ssh' };
    return { problem: `an ssh key cannot be a ${use.as === 'become' ? 'become' : 'vault'} password` };
  }
  if (!SECRET_TYPES.has(keyType)) return { problem: `its type ${keyType} has no Baton credential type` };
  switch (use.as) {
    case 'repository':
      return { id: 'token', type: 'token', label: 'token' };
    case 'become':
      return { id: 'become_password', type: 'become_password', label: 'become' };
    case 'login':
      return { problem: 'Baton connects to hosts with ssh keys, not passwords' };
    case 'vault': {
      const vaultId = text(use.vaultName);
      return vaultId && VAULT_ID.test(vaultId)
        ? { id: `vault:${vaultId}`, type: 'vault_password', label: `vault ${vaultId}`, vaultId }
        : { id: 'vault:', type: 'vault_password', label: 'vault' };
    }
  }
}

interface KeyEntry {
  type: string;
  /** variant id → plan key */
  credentials: Map<string, string>;
}

export interface KeyBook {
  /** The plan key of the credential for this use of the key named `name` (warning when there is none), or undefined. */
  credential(name: string | null | undefined, use: KeyUse, where: string): string | undefined;
}

const isNone = (name: string, type: string) => name === 'None' || type === 'none';

/** Every use the backup makes of each key, in document order. */
function usesOf(backup: SemaphoreBackup): Array<{ name: string | null | undefined; use: KeyUse }> {
  const uses: Array<{ name: string | null | undefined; use: KeyUse }> = [];
  for (const r of backup.repositories ?? []) uses.push({ name: r.ssh_key, use: { as: 'repository' } });
  for (const i of backup.inventories ?? []) {
    uses.push({ name: i.ssh_key, use: { as: 'login' } });
    uses.push({ name: i.become_key, use: { as: 'become' } });
  }
  for (const t of backup.templates ?? []) {
    uses.push({ name: t.vault_key, use: { as: 'vault' } });
    for (const v of t.vaults ?? []) uses.push({ name: v.vault_key, use: { as: 'vault', vaultName: v.name } });
  }
  return uses;
}

/** Plans the credentials of every key and answers which one each use refers to. */
export function mapKeys(ctx: MapContext, backup: SemaphoreBackup): KeyBook {
  const entries = new Map<string, KeyEntry>();
  const variants = new Map<string, Variant[]>();
  const sourceKeys = backup.keys ?? [];
  const firstByName = new Map<string, (typeof sourceKeys)[number]>();
  for (const k of sourceKeys)
    if (!firstByName.has(k.name)) {
      firstByName.set(k.name, k);
      variants.set(k.name, []);
    }
  for (const { name, use } of usesOf(backup)) {
    const key = firstByName.get(name ?? '');
    if (!key) continue;
    const v = variantOf(key.type ?? '', use);
    const list = variants.get(key.name)!;
    if (!('problem' in v) && !list.some((x) => x.id === v.id)) list.push(v);
  }

  for (const k of sourceKeys) {
    const type = k.type ?? '';
    if (entries.has(k.name)) {
      skip(ctx, 'key', k.name, 'another key has the same name (the backup refers to keys by name)');
      continue;
    }
    const entry: KeyEntry = { type, credentials: new Map() };
    entries.set(k.name, entry);
    if (isNone(k.name, type)) continue;
    if (type !== 'ssh' && !SECRET_TYPES.has(type)) {
      skip(ctx, 'key', k.name, `its type ${type || '(none)'} has no Baton credential type`);
      continue;
    }
    let list = variants.get(k.name) ?? [];
    // A key nobody uses is still imported, by what its type most likely holds.
    if (!list.length)
      list = [
        type === 'ssh'
          ? { id: 'ssh_key', type: 'ssh_key', label: 'ssh' }
          : { id: 'token', type: 'token', label: 'token' },
      ];
    for (const v of list) {
      const wanted = list.length === 1 ? k.name : `${k.name} (${v.label})`;
      const key = planKey(ctx, 'key', wanted);
      const cred: PlannedCredential = {
        kind: 'credential',
        key,
        name: batonName(ctx, 'credential', wanted, 'key'),
        type: v.type,
        inputs: v.vaultId ? { vault_id: v.vaultId } : {},
      };
      ctx.objects.push(cred);
      entry.credentials.set(v.id, key);
    }
  }

  return {
    credential(name, use, where) {
      if (name === null || name === undefined || name === '') return undefined;
      const entry = entries.get(name);
      if (!entry) {
        ctx.warnings.push(`${where} names key "${name}", which the backup lacks: imported without it`);
        return undefined;
      }
      if (isNone(name, entry.type)) return undefined;
      const v = variantOf(entry.type, use);
      if ('problem' in v) {
        ctx.warnings.push(`${where} uses key "${name}", not imported for that use: ${v.problem}`);
        return undefined;
      }
      if (use.as === 'vault' && text(use.vaultName) && !v.vaultId)
        ctx.warnings.push(
          `${where}: vault id "${use.vaultName}" is not a Baton vault id (letters, digits, _ . -): imported without it`,
        );
      return entry.credentials.get(v.id);
    },
  };
}
