// AWX credentials, projects, inventories and inventory sources as planned Baton objects.
import type { AwxCredential, AwxInventory, CredentialType } from '@baton/contracts';
import type { PlannedCredential } from '../import-plan.js';
import { readVars } from '../import-text.js';
import type { AwxContext } from './awx-context.js';
import { keyOf, keyOfObject, orgOf } from './awx-keys.js';

// eslint-disable-next-line no-control-regex -- control characters are what a login may not hold
const LOGIN = /^[^\s\u0000-\u001f\u007f]{1,256}$/;
const BECOME_METHOD = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The suffix of the extra become_password credential a Machine credential with a become password turns into. */
export const BECOME_SUFFIX = '#become';

/** Which Baton type an AWX credential becomes, by its type's kind (and name), or why none. */
function baseType(c: AwxCredential, custom: boolean): { type: CredentialType } | { reason: string } {
  const kind = String(c.credential_type.kind ?? '');
  const typeName = String(c.credential_type.name ?? '');
  if (custom) return { reason: `its type ${typeName} is a custom credential type, which Baton does not have` };
  const inputs = c.inputs ?? {};
  switch (kind) {
    case 'ssh':
      return { type: 'ssh_key' };
    case 'scm':
      return { type: 'ssh_key' in inputs || 'ssh_key_data' in inputs ? 'ssh_key' : 'token' };
    case 'vault':
      return { type: 'vault_password' };
    case 'token':
      return { type: 'token' };
    case 'registry':
      return { type: 'registry' };
    case 'galaxy':
      return { type: 'galaxy' };
    case 'cloud':
      if (typeName === 'Amazon Web Services') return { type: 'env' };
      return { reason: `Baton has no ${typeName} credential type` };
    default:
      return { reason: `Baton has no ${typeName || kind} credential type` };
  }
}

function publicInputs(type: CredentialType, inputs: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  const username = str(inputs.username);
  if ((type === 'ssh_key' || type === 'registry') && username && LOGIN.test(username)) out.username = username;
  if (type === 'vault_password' && str(inputs.vault_id) && /^[A-Za-z0-9_.-]{1,128}$/.test(String(inputs.vault_id)))
    out.vault_id = String(inputs.vault_id);
  // A Galaxy / Automation Hub credential: its server (the token never comes with an export).
  if (type === 'galaxy' && str(inputs.url) && /^https?:\/\//.test(String(inputs.url))) out.url = String(inputs.url);
  if (type === 'registry' && str(inputs.host)) {
    const host = String(inputs.host);
    out.url = /^https?:\/\//.test(host) ? host : `https://${host}`;
  }
  return out;
}

export function planCredentials(ctx: AwxContext): void {
  const custom = new Set((ctx.doc.credential_types ?? []).map((t) => `${t.kind ?? ''}:${t.name}`));
  for (const t of ctx.doc.credential_types ?? [])
    ctx.skip(
      'credential_type',
      t.name,
      'custom credential types have no Baton equivalent; credentials of it are skipped',
    );
  for (const c of ctx.doc.credentials ?? []) {
    const key = keyOfObject(c, 'credential');
    if (!key) continue;
    const mapped = baseType(c, custom.has(`${c.credential_type.kind ?? ''}:${c.credential_type.name ?? ''}`));
    if ('reason' in mapped) {
      ctx.skip('credential', c.name, mapped.reason);
      if (mapped.reason.includes('custom')) ctx.warn(`credential ${c.name} was skipped: ${mapped.reason}`);
      continue;
    }
    const inputs = c.inputs ?? {};
    const cred: PlannedCredential = {
      kind: 'credential',
      key,
      name: ctx.names.claim('credential', c.name, orgOf(c) || undefined),
      type: mapped.type,
      description: c.description ?? undefined,
      inputs: publicInputs(mapped.type, inputs),
    };
    ctx.add(cred);
    if (mapped.type === 'env')
      ctx.warn(`credential ${c.name}: set its variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY…) in Baton`);
    if (c.credential_type.kind === 'scm' && mapped.type === 'token' && str(inputs.username))
      ctx.warn(`credential ${c.name}: git over HTTPS uses a token in Baton; set the token (the username is not kept)`);
    // A Machine credential's become password is a credential of its own in Baton.
    if (mapped.type === 'ssh_key' && c.credential_type.kind === 'ssh' && 'become_password' in inputs) {
      const method = str(inputs.become_method);
      const user = str(inputs.become_username);
      ctx.add({
        kind: 'credential',
        key: key + BECOME_SUFFIX,
        name: ctx.names.claim('credential', `${c.name} become`),
        type: 'become_password',
        description: `the become password of ${c.name}`,
        inputs: {
          ...(method && BECOME_METHOD.test(method) ? { method } : {}),
          ...(user && LOGIN.test(user) ? { user } : {}),
        },
      });
      if (inputs.become_password === 'ASK')
        ctx.warn(`credential ${c.name}: "prompt on launch" for the become password is not in Baton; set the password`);
    }
  }
}

export function planProjects(ctx: AwxContext): void {
  for (const p of ctx.doc.projects ?? []) {
    const key = keyOfObject(p, 'project');
    if (!key) continue;
    if ((p.scm_type ?? '') !== 'git') {
      ctx.skip(
        'project',
        p.name,
        p.scm_type ? `${p.scm_type} projects are not supported (git only)` : 'a manual project has no repository',
      );
      continue;
    }
    if (!p.scm_url) {
      ctx.skip('project', p.name, 'it has no scm_url');
      continue;
    }
    const credKey = keyOf(p.credential);
    const cred = credKey ? ctx.planned.get(credKey) : undefined;
    if (credKey && !cred) ctx.warn(`project ${p.name}: its credential was not imported; it is left without one`);
    const branch = p.scm_branch || 'main';
    if (!p.scm_branch)
      ctx.warn(`project ${p.name}: no branch is set; Baton tracks main (change it if the default branch differs)`);
    ctx.add({
      kind: 'project',
      key,
      name: ctx.names.claim('project', p.name, orgOf(p) || undefined),
      git_url: p.scm_url,
      branch,
      ...(cred ? { credential: cred.key } : {}),
    });
  }
}

type Graph = Map<string, Array<{ child: string; path: string }>>;

/** A group that is its own descendant: the path of the child entry that closes the cycle. */
function cyclePath(graph: Graph): string | undefined {
  const state = new Map<string, 'open' | 'done'>();
  for (const root of graph.keys()) {
    if (state.has(root)) continue;
    const stack: Array<{ node: string; next: number }> = [{ node: root, next: 0 }];
    state.set(root, 'open');
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const edges = graph.get(top.node) ?? [];
      if (top.next >= edges.length) {
        state.set(top.node, 'done');
        stack.pop();
        continue;
      }
      const edge = edges[top.next++]!;
      const s = state.get(edge.child);
      if (s === 'open') return edge.path;
      if (s === undefined) {
        state.set(edge.child, 'open');
        stack.push({ node: edge.child, next: 0 });
      }
    }
  }
  return undefined;
}

/** The inventory as YAML-shaped JSON (which ansible-inventory reads), or the path of a group cycle. */
function inventoryContent(
  ctx: AwxContext,
  inv: AwxInventory,
  at: string,
): { content: string; disabled: string[] } | { cycle: string } {
  const vars = (v: unknown, what: string) => {
    const r = readVars(v);
    if (!r.ok) ctx.warn(`inventory ${inv.name}: the variables of ${what} ${r.reason}; they were left out`);
    return r.ok ? r.vars : {};
  };
  const hosts = inv.related?.hosts ?? [];
  const groups = inv.related?.groups ?? [];
  const disabled = hosts.filter((h) => h.enabled === false).map((h) => h.name);
  const enabled = new Set(hosts.filter((h) => h.enabled !== false).map((h) => h.name));
  const groupNames = new Set(groups.map((g) => g.name));
  const members = new Map<string, Set<string>>(groups.map((g) => [g.name, new Set<string>()]));
  const graph: Graph = new Map(groups.map((g) => [g.name, []]));
  groups.forEach((g, gi) => {
    for (const h of g.related?.hosts ?? []) if (h.name && enabled.has(h.name)) members.get(g.name)!.add(h.name);
    (g.related?.children ?? []).forEach((c, ci) => {
      if (c.name && groupNames.has(c.name))
        graph.get(g.name)!.push({ child: c.name, path: `${at}.related.groups.${gi}.related.children.${ci}` });
    });
  });
  for (const h of hosts)
    for (const g of h.related?.groups ?? []) if (g.name && enabled.has(h.name)) members.get(g.name)?.add(h.name);
  const cycle = cyclePath(graph);
  if (cycle) return { cycle };
  const all: Record<string, unknown> = {};
  const allVars = vars(inv.variables, 'the inventory');
  if (Object.keys(allVars).length) all.vars = allVars;
  all.hosts = Object.fromEntries(
    hosts.filter((h) => enabled.has(h.name)).map((h) => [h.name, vars(h.variables, `host ${h.name}`)]),
  );
  if (groups.length)
    all.children = Object.fromEntries(
      groups.map((g) => {
        const gv = vars(g.variables, `group ${g.name}`);
        const body: Record<string, unknown> = {};
        if (Object.keys(gv).length) body.vars = gv;
        if (members.get(g.name)!.size) body.hosts = Object.fromEntries([...members.get(g.name)!].map((h) => [h, null]));
        const children = graph.get(g.name)!;
        if (children.length) body.children = Object.fromEntries(children.map((c) => [c.child, null]));
        return [g.name, body];
      }),
    );
  return { content: JSON.stringify({ all }, null, 2), disabled };
}

export function planInventories(ctx: AwxContext): void {
  (ctx.doc.inventory ?? []).forEach((inv, i) => {
    if (ctx.problem) return;
    const key = keyOfObject(inv, 'inventory');
    if (!key) return;
    if (inv.kind) {
      ctx.skip('inventory', inv.name, `${inv.kind} inventories are computed by AWX; Baton has no equivalent`);
      return;
    }
    const built = inventoryContent(ctx, inv, `body.inventory.${i}`);
    if ('cycle' in built) {
      ctx.problem = { path: built.cycle, message: 'makes a group its own descendant (a cycle in group children)' };
      return;
    }
    if (built.disabled.length)
      ctx.warn(
        `inventory ${inv.name}: disabled hosts were left out (${built.disabled.join(', ')}), as AWX never runs on them`,
      );
    ctx.add({
      kind: 'inventory',
      key,
      name: ctx.names.claim('inventory', inv.name, orgOf(inv) || undefined),
      content: built.content,
    });
  });
}

export function planInventorySources(ctx: AwxContext): void {
  for (const s of ctx.doc.inventory_sources ?? []) {
    const key = keyOfObject(s, 'inventory_source');
    if (!key) continue;
    if (s.source !== 'scm') {
      ctx.skip(
        'inventory_source',
        s.name,
        `${s.source} sources have no Baton equivalent; use an inventory plugin file in a project, or a url source`,
      );
      continue;
    }
    const inv = keyOf(s.inventory);
    const prj = keyOf(s.source_project);
    if (!inv || !ctx.planned.has(inv) || !prj || !ctx.planned.has(prj) || !s.source_path) {
      ctx.skip('inventory_source', s.name, 'its inventory, project or file was not imported');
      continue;
    }
    const vars = readVars(s.source_vars);
    if (!vars.ok || Object.keys(vars.vars).length)
      ctx.warn(`inventory source ${s.name}: source_vars are not carried over; put them in the plugin file`);
    if ((s.related?.schedules ?? []).length)
      ctx.warn(
        `inventory source ${s.name}: its schedules were not imported (refresh it with POST /v1/inventory-sources/{id}/refresh)`,
      );
    ctx.add({
      kind: 'inventory_source',
      key,
      name: ctx.names.claim('inventory_source', s.name),
      source_kind: /\.(py|sh|pl|rb)$/.test(s.source_path) ? 'script' : 'plugin',
      inventory: inv,
      project: prj,
      path: s.source_path,
    });
  }
}
