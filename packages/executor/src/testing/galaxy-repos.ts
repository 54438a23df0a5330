// Test support for Galaxy requirements: local git repositories of a role and of a collection (ansible-galaxy
// installs both from `git+file://` without a network), a project checkout holding requirement files, and a fake
// `ansible-galaxy` for what the real one cannot be made to do (hang, print a lot, show its argv).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const GIT_IDENTITY = ['-c', 'user.name=Baton Test', '-c', 'user.email=test@baton.invalid'];

function commitAll(dir: string, message: string): void {
  const git = (...args: string[]) => execFileSync('git', [...GIT_IDENTITY, ...args], { cwd: dir, stdio: 'pipe' });
  if (!fs.existsSync(path.join(dir, '.git'))) git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', message);
}

function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
}

/** A role in a git repository: `tasks/main.yml` prints `message`. Its requirement: `src: <url>`, `name: <name>`. */
export function createRoleRepo(parent: string, name = 'baton_test_role', message = 'hello from the role') {
  const dir = path.join(parent, name);
  writeFiles(dir, {
    'tasks/main.yml': `- name: say it\n  ansible.builtin.debug:\n    msg: ${JSON.stringify(message)}\n`,
    'meta/main.yml': [
      'galaxy_info:',
      '  author: baton',
      '  description: a test role',
      '  license: MIT',
      '  min_ansible_version: "2.14"',
      '  platforms: []',
      'dependencies: []',
      '',
    ].join('\n'),
  });
  commitAll(dir, 'role');
  return { dir, name, url: `git+file://${dir}` };
}

/** A collection `namespace.name` in a git repository, with one module-less README. Requirement: `name: <url>, type: git`. */
export function createCollectionRepo(parent: string, namespace = 'baton', name = 'testcoll', version = '1.0.0') {
  const dir = path.join(parent, `${namespace}.${name}`);
  writeFiles(dir, {
    'galaxy.yml': [
      `namespace: ${namespace}`,
      `name: ${name}`,
      `version: ${version}`,
      'readme: README.md',
      'authors: [baton]',
      '',
    ].join('\n'),
    'README.md': `# ${namespace}.${name}\n`,
    'roles/inner/tasks/main.yml': '- ansible.builtin.debug:\n    msg: inner\n',
  });
  commitAll(dir, 'collection');
  return {
    dir,
    fqcn: `${namespace}.${name}`,
    url: `git+file://${dir}`,
    /** where it lands below a collections path */
    installedAt: (collectionsPath: string) => path.join(collectionsPath, 'ansible_collections', namespace, name),
  };
}

/** Requirement file texts for those repositories. */
export const roleRequirement = (role: { url: string; name: string }) => `- src: ${role.url}\n  name: ${role.name}\n`;
export const collectionRequirement = (collection: { url: string }) =>
  `- name: ${collection.url}\n  type: git\n  version: HEAD\n`;

/** A project checkout (a plain directory is enough here) holding `files` (relative path → text). */
export function createProject(parent: string, files: Record<string, string>, name = 'project'): string {
  const dir = path.join(parent, name);
  fs.mkdirSync(dir, { recursive: true });
  writeFiles(dir, files);
  return dir;
}

/**
 * A fake `ansible-galaxy` (a shell script running `body`) in `dir`, for a PATH that puts it first. The script
 * sees the real arguments in "$@" and the environment the installer gives it.
 */
export function fakeGalaxy(dir: string, body: string): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'ansible-galaxy'), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return dir;
}
