import { describe, expect, it } from '@jest/globals';
import type { PolicyMatch } from '@baton/contracts';
import { INLINE_PLAYBOOK_LABEL as INLINE_PLAYBOOK } from '../runs/run.view.js';
import { approverMatches, matchingPolicies, type RunFacts } from './policy-match.js';

interface TestPolicy {
  id: string;
  enabled: boolean;
  match: PolicyMatch;
}
const policy = (id: string, match: PolicyMatch, enabled = true): TestPolicy => ({ id, enabled, match });

/** Facts of a real project run by an operator through the API; `hosts` counts its calls. */
function facts(over: Partial<Omit<RunFacts, 'hosts'>> = {}, hostNames: string[] = ['web1', 'db1']) {
  const calls = { hosts: 0 };
  const f: RunFacts = {
    projectId: 'prj_A',
    templateId: null,
    inventoryId: 'inv_A',
    playbook: 'deploy/site.yml',
    check: false,
    origin: 'api',
    submitterRole: 'operator',
    labels: [],
    ...over,
    hosts: async () => {
      calls.hosts++;
      return hostNames;
    },
  };
  return { f, calls };
}

const ids = (ps: TestPolicy[]) => ps.map((p) => p.id);
const matches = async (match: PolicyMatch, over: Partial<Omit<RunFacts, 'hosts'>> = {}, hosts?: string[]) =>
  (await matchingPolicies([policy('p', match)], facts(over, hosts).f)).length === 1;

describe('matchingPolicies', () => {
  it('an empty match holds for every run; a disabled policy never matches', async () => {
    const { f } = facts();
    expect(ids(await matchingPolicies([policy('all', {}), policy('off', {}, false)], f))).toEqual(['all']);
    expect(await matchingPolicies([], f)).toEqual([]);
  });

  it.each<[string, PolicyMatch, Partial<Omit<RunFacts, 'hosts'>>, boolean]>([
    ['project listed', { projects: ['prj_B', 'prj_A'] }, {}, true],
    ['project not listed', { projects: ['prj_B'] }, {}, false],
    ['projects given, inline run (no project)', { projects: ['prj_A'] }, { projectId: null }, false],
    ['template listed', { templates: ['tpl_A'] }, { templateId: 'tpl_A' }, true],
    ['templates given, run not from a template', { templates: ['tpl_A'] }, {}, false],
    ['inventory listed', { inventories: ['inv_A'] }, {}, true],
    ['inventory not listed', { inventories: ['inv_B'] }, {}, false],
    ['inventories given, inline inventory', { inventories: ['inv_A'] }, { inventoryId: null }, false],
    ['playbook glob * within a directory', { playbooks: ['deploy/*.yml'] }, {}, true],
    ['playbook glob * does not cross /', { playbooks: ['*.yml'] }, {}, false],
    ['playbook glob ** crosses /', { playbooks: ['**.yml'] }, {}, true],
    ['playbook glob ? is one character', { playbooks: ['deploy/sit?.yml'] }, {}, true],
    ['playbook globs: any one holds', { playbooks: ['x.yml', 'deploy/**'] }, {}, true],
    [
      'inline playbook by its name',
      { playbooks: [INLINE_PLAYBOOK] },
      { playbook: INLINE_PLAYBOOK, projectId: null },
      true,
    ],
    ['inline playbook, project globs', { playbooks: ['**/*.yml'] }, { playbook: INLINE_PLAYBOOK }, false],
    ['check: true, dry run', { check: true }, { check: true }, true],
    ['check: true, real run', { check: true }, { check: false }, false],
    ['check: false, real run', { check: false }, { check: false }, true],
    ['check: false, dry run', { check: false }, { check: true }, false],
    ['origin listed', { origins: ['schedule', 'trigger'] }, { origin: 'trigger' }, true],
    ['origin not listed', { origins: ['schedule', 'trigger'] }, { origin: 'api' }, false],
    ['role listed', { submitted_by_roles: ['operator'] }, {}, true],
    ['role not listed', { submitted_by_roles: ['viewer'] }, { submitterRole: 'admin' }, false],
    ['a label asked for', { labels: ['gpu', 'eu'] }, { labels: ['eu'] }, true],
    ['no label asked for', { labels: ['gpu'] }, { labels: ['eu', 'us'] }, false],
    ['labels given, run asks for none', { labels: ['gpu'] }, { labels: [] }, false],
    [
      'every field holds',
      { projects: ['prj_A'], inventories: ['inv_A'], playbooks: ['deploy/**'], check: false, origins: ['api'] },
      {},
      true,
    ],
    ['one of several fields fails', { projects: ['prj_A'], origins: ['api'], check: true }, {}, false],
  ])('%s', async (_what, match, over, expected) => {
    expect(await matches(match, over)).toBe(expected);
  });

  it('host globs hold when any target host matches: dots, dashes, brackets (IPv6), unicode, ?', async () => {
    const hosts = ['web-01.eu.example.com', '[2001:db8::1]', '2001:db8::2', 'bücher.example', '10.0.0.7', '😀-host'];
    const cases: Array<[string[], boolean]> = [
      [['web-??.eu.example.com'], true],
      [['web-*.example.com'], true], // host names hold no `/`: `*` matches across dots
      [['web-0?.us.*'], false],
      [['[2001:db8::*]'], true],
      [['2001:db8::?'], true],
      [['2001:db8::3'], false],
      [['bücher.*'], true],
      [['b?cher.example'], true],
      [['10.0.0.*'], true],
      [['10.0.0.1?'], false],
      [['?-host'], true],
      [['db*', 'cache*'], false],
      [['db*', '*.example'], true],
      [['**'], true],
    ];
    for (const [globs, expected] of cases)
      expect([globs, await matches({ hosts: globs }, {}, hosts)]).toEqual([globs, expected]);
    expect(await matches({ hosts: ['*'] }, {}, [])).toBe(false);
  });

  it('asks for the hosts at most once per evaluation, however many policies have host globs', async () => {
    const { f, calls } = facts();
    const ps = [policy('a', { hosts: ['web*'] }), policy('b', { hosts: ['nope*'] }), policy('c', { hosts: ['db1'] })];
    expect(ids(await matchingPolicies(ps, f))).toEqual(['a', 'c']);
    expect(calls.hosts).toBe(1);
  });

  it('never asks for the hosts when no enabled policy with host globs holds on the other fields', async () => {
    const { f, calls } = facts();
    const ps = [
      policy('no-globs', { origins: ['api'] }),
      policy('other-project', { projects: ['prj_Z'], hosts: ['*'] }),
      policy('real-runs-only', { check: true, hosts: ['*'] }),
      policy('disabled', { hosts: ['*'] }, false),
    ];
    expect(ids(await matchingPolicies(ps, f))).toEqual(['no-globs']);
    expect(calls.hosts).toBe(0);
  });

  it('passes on a failure to compute the hosts, and only then', async () => {
    const f: RunFacts = { ...facts().f, hosts: () => Promise.reject(new Error('ansible-inventory failed')) };
    await expect(matchingPolicies([policy('h', { hosts: ['*'] })], f)).rejects.toThrow('ansible-inventory failed');
    expect(ids(await matchingPolicies([policy('plain', {})], f))).toEqual(['plain']);
  });

  it('keeps the given order and the given objects', async () => {
    const ps = [policy('z', {}), policy('a', { check: false }), policy('m', { origins: ['api'] })];
    const out = await matchingPolicies(ps, facts().f);
    expect(out).toEqual(ps);
    expect(out[0]).toBe(ps[0]);
  });
});

describe('approverMatches', () => {
  const who = { id: 'usr_B', role: 'operator' as const, teamIds: ['team_1', 'team_2'] };

  it('names a person listed as a user, holding a listed role, or in a listed team', () => {
    expect(approverMatches({ users: ['usr_A', 'usr_B'] }, who)).toBe(true);
    expect(approverMatches({ roles: ['operator'] }, who)).toBe(true);
    expect(approverMatches({ teams: ['team_9', 'team_2'] }, who)).toBe(true);
    expect(approverMatches({ users: ['usr_A'], roles: ['viewer'], teams: ['team_9'] }, who)).toBe(false);
  });

  it('names nobody when empty; an admin counts only where named (the caller lets admins decide anyway)', () => {
    expect(approverMatches({}, who)).toBe(false);
    const admin = { id: 'usr_R', role: 'admin' as const, teamIds: [] };
    expect(approverMatches({ roles: ['operator'] }, admin)).toBe(false);
    expect(approverMatches({ roles: ['admin'] }, admin)).toBe(true);
    expect(approverMatches({ teams: ['team_1'] }, { ...who, teamIds: [] })).toBe(false);
  });
});
