import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { probeBwrap } from '../sandbox/sandbox.js';
import {
  collectionRequirement,
  createCollectionRepo,
  createProject,
  createRoleRepo,
  fakeGalaxy,
  roleRequirement,
} from '../testing/galaxy-repos.js';
import { tempDir } from '../testing/index.js';
import { RunRefused, ShutdownAbort } from './run-conclusion.js';
import {
  findRequirements,
  installRequirements,
  type InstallRequirementsOptions,
  MAX_REQUIREMENTS_LINE_CHARS,
  MAX_REQUIREMENTS_LOG_BYTES,
  type RequirementFile,
  requirementsHash,
} from './run-requirements.js';

const root = tempDir('baton-requirements-test');
const repos = path.join(root, 'repos');
const dataDir = path.join(root, 'data');
const runsDir = path.join(root, 'runs');
let role: ReturnType<typeof createRoleRepo>;
let otherRole: ReturnType<typeof createRoleRepo>;
let collection: ReturnType<typeof createCollectionRepo>;

beforeAll(() => {
  for (const d of [repos, dataDir, runsDir]) fs.mkdirSync(d);
  role = createRoleRepo(repos, 'baton_test_role');
  otherRole = createRoleRepo(repos, 'baton_other_role', 'the other role');
  collection = createCollectionRepo(repos);
  execFileSync('ansible-galaxy', ['--version'], { stdio: 'ignore' }); // these tests need the real one
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A private run directory (as runPlaybook makes) holding `project/` with these files. */
function newRun(projectFiles: Record<string, string>) {
  const runDir = fs.mkdtempSync(path.join(runsDir, 'run-'));
  fs.chmodSync(runDir, 0o700);
  for (const d of ['home', 'tmp']) fs.mkdirSync(path.join(runDir, d), { mode: 0o700 });
  const projectDir = createProject(runDir, projectFiles);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: path.join(runDir, 'home'),
    TMPDIR: path.join(runDir, 'tmp'),
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
  };
  return { runDir, projectDir, env };
}

const cacheDirOf = (project: string) => path.join(dataDir, 'requirements', project);
const bothKinds = () => ({
  'roles/requirements.yml': roleRequirement(role),
  'collections/requirements.yml': `collections:\n${collectionRequirement(collection).replace(/^(?=.)/gm, '  ')}`,
});

/** Finds the project's requirements and installs them; returns the result or the refusal, and the log lines. */
async function install(
  run: ReturnType<typeof newRun>,
  extra: Partial<InstallRequirementsOptions> = {},
): Promise<{ result?: Awaited<ReturnType<typeof installRequirements>>; refused?: RunRefused; log: string[] }> {
  const log: string[] = [];
  const files = await findRequirements(run.projectDir);
  try {
    const result = await installRequirements({
      projectDir: run.projectDir,
      files,
      cacheDir: cacheDirOf('prj_default'),
      runDir: run.runDir,
      env: run.env,
      timeoutMs: 60_000,
      log: (line) => log.push(line),
      ...extra,
    });
    return { result, log };
  } catch (err) {
    if (err instanceof RunRefused) return { refused: err, log };
    throw err;
  } finally {
    // Nothing of ansible-galaxy's (its home, the config with the token) stays for the playbook to read.
    expect(fs.existsSync(path.join(run.runDir, 'galaxy'))).toBe(false);
    expect(fs.existsSync(path.join(run.runDir, 'galaxy.cfg'))).toBe(false);
  }
}

async function refusalOf(promise: Promise<unknown>): Promise<RunRefused> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RunRefused);
  return err as RunRefused;
}

/** Gone, or a zombie nobody reaped yet (a container's PID 1 may not reap). */
function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}
async function waitGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 40; i++) {
    if (processGone(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
const mode = (p: string) => fs.statSync(p).mode & 0o777;
/** A log's lines as one line of single spaces: ansible's wrapped warnings read as written. */
const unwrapped = (log: string[]) => log.join(' ').replace(/\s+/g, ' ');
const leftovers = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.includes('.tmp-')) : []);

describe('findRequirements', () => {
  it('finds nothing in a project without requirements', async () => {
    const { projectDir } = newRun({ 'site.yml': '- hosts: all\n' });
    expect(await findRequirements(projectDir)).toEqual([]);
  });

  it('lists the files in a fixed order with what each installs, leaving out empty ones', async () => {
    const topLevel = `# both kinds\n---\nroles:\n  - src: ${role.url}\ncollections:\n  - name: ${collection.url}\n    type: git\n`;
    const { projectDir } = newRun({
      'requirements.yml': topLevel,
      'collections/requirements.yml': 'collections: []\n',
      'roles/requirements.yml': roleRequirement(role),
      'roles/requirements.yaml': '# nothing yet\n\n',
    });
    expect(await findRequirements(projectDir)).toEqual([
      { path: 'roles/requirements.yml', content: roleRequirement(role), sections: ['roles'] },
      { path: 'collections/requirements.yml', content: 'collections: []\n', sections: ['collections'] },
      { path: 'requirements.yml', content: topLevel, sections: ['roles', 'collections'] },
    ]);
  });

  it('reads a top-level file by its shape: a legacy list of roles, one section, a flow mapping', async () => {
    const sectionsOf = async (content: string) =>
      (await findRequirements(newRun({ 'requirements.yml': content }).projectDir))[0]!.sections;
    expect(await sectionsOf(roleRequirement(role))).toEqual(['roles']);
    expect(await sectionsOf(`collections:\n  - name: community.general\n`)).toEqual(['collections']);
    expect(await sectionsOf(`"roles":\n  - src: ${role.url}\n`)).toEqual(['roles']);
    expect(await sectionsOf(`{collections: [{name: community.general}]}\n`)).toEqual(['collections']);
    // Neither key: both commands run and ansible-galaxy says what is wrong.
    expect(await sectionsOf(`something: else\n`)).toEqual(['roles', 'collections']);
  });

  it('follows a symlink inside the checkout', async () => {
    const { projectDir } = newRun({ 'deps/roles.yml': roleRequirement(role) });
    fs.mkdirSync(path.join(projectDir, 'roles'));
    fs.symlinkSync('../deps/roles.yml', path.join(projectDir, 'roles', 'requirements.yml'));
    expect(await findRequirements(projectDir)).toEqual([
      { path: 'roles/requirements.yml', content: roleRequirement(role), sections: ['roles'] },
    ]);
  });

  it('refuses a requirements file, or its directory, that leads out of the checkout', async () => {
    const outside = path.join(root, 'outside');
    fs.mkdirSync(outside, { recursive: true });
    fs.writeFileSync(path.join(outside, 'requirements.yml'), roleRequirement(role));

    const viaFile = newRun({});
    fs.mkdirSync(path.join(viaFile.projectDir, 'roles'));
    fs.symlinkSync(path.join(outside, 'requirements.yml'), path.join(viaFile.projectDir, 'roles', 'requirements.yml'));
    const refused = await refusalOf(findRequirements(viaFile.projectDir));
    expect(refused).toMatchObject({ conclusion: 'failed', reason: 'requirements' });
    expect(refused.message).toBe('baton: the requirements file "roles/requirements.yml" points outside the project');

    const viaDir = newRun({});
    fs.symlinkSync(outside, path.join(viaDir.projectDir, 'collections'));
    expect((await refusalOf(findRequirements(viaDir.projectDir))).message).toMatch(
      /"collections\/requirements\.yml" points outside the project/,
    );

    const dangling = newRun({});
    fs.symlinkSync(path.join(root, 'no-such-file'), path.join(dangling.projectDir, 'requirements.yml'));
    expect((await refusalOf(findRequirements(dangling.projectDir))).reason).toBe('requirements');
  });

  it('refuses what is not a regular file (a FIFO would block the read forever)', async () => {
    const { projectDir } = newRun({});
    execFileSync('mkfifo', [path.join(projectDir, 'requirements.yml')]);
    const refused = await refusalOf(findRequirements(projectDir));
    expect(refused.message).toBe('baton: the requirements file "requirements.yml" is not a regular file');
  });
});

describe('requirementsHash', () => {
  const files: RequirementFile[] = [{ path: 'roles/requirements.yml', content: 'a', sections: ['roles'] }];
  it('is a sha256 of the paths, contents and galaxy server URL', () => {
    const hash = requirementsHash(files);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(requirementsHash([{ ...files[0]! }])).toBe(hash);
    expect(requirementsHash([{ ...files[0]!, content: 'b' }])).not.toBe(hash);
    expect(requirementsHash([{ ...files[0]!, path: 'requirements.yml' }])).not.toBe(hash);
    expect(requirementsHash(files, 'https://galaxy.example/api/')).not.toBe(hash);
    expect(requirementsHash(files, 'https://galaxy.example/api/')).not.toBe(
      requirementsHash(files, 'https://other.example/api/'),
    );
  });
});

describe('installRequirements with the real ansible-galaxy', () => {
  it('installs roles and collections into the project cache, and a second run reuses it without ansible-galaxy', async () => {
    const cacheDir = cacheDirOf('prj_both');
    const first = newRun(bothKinds());
    const { result, refused, log } = await install(first, { cacheDir });
    expect(refused).toBeUndefined();
    const hash = requirementsHash(await findRequirements(first.projectDir));
    const entry = path.join(cacheDir, hash);
    expect(result).toEqual({
      collectionsPath: path.join(entry, 'collections'),
      rolesPath: path.join(entry, 'roles'),
      cacheHit: false,
      hash,
    });
    expect(fs.readFileSync(path.join(result!.rolesPath, role.name, 'tasks', 'main.yml'), 'utf8')).toMatch(
      /hello from the role/,
    );
    expect(fs.existsSync(path.join(collection.installedAt(result!.collectionsPath), 'MANIFEST.json'))).toBe(true);
    expect(log[0]).toBe('baton: installing requirements (roles/requirements.yml, collections/requirements.yml)');
    expect(log).toContain(`- ${role.name} was installed successfully`);
    expect(log).toContain('baton.testcoll:1.0.0 was installed successfully');
    // The cache entry's paths stay out of the log; the "not a configured collections path" warning never comes.
    expect(log.join('\n')).not.toContain(cacheDir);
    expect(log.join('\n')).not.toMatch(/WARNING/);
    expect(fs.existsSync(path.join(entry, '.complete'))).toBe(true);
    for (const d of [cacheDir, entry, result!.rolesPath, result!.collectionsPath]) expect(mode(d)).toBe(0o700);
    expect(leftovers(cacheDir)).toEqual([]);
    // Nothing of ansible-galaxy's stays in the run directory for the playbook to read.
    expect(fs.readdirSync(first.runDir).sort()).toEqual(['home', 'project', 'tmp']);

    const before = fs.statSync(entry);
    const second = newRun(bothKinds());
    // An ansible-galaxy that fails first on PATH: the cache hit must not run it at all.
    const failing = fakeGalaxy(path.join(root, 'failing-galaxy'), 'echo "ansible-galaxy ran" ; exit 1');
    const hit = await install(second, { cacheDir, env: { ...second.env, PATH: `${failing}:${process.env.PATH}` } });
    expect(hit.refused).toBeUndefined();
    expect(hit.result).toEqual({ ...result, cacheHit: true });
    expect(hit.log).toEqual([`baton: requirements unchanged, using the cache (${hash.slice(0, 12)})`]);
    const after = fs.statSync(entry);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it('installs again, into a new entry, when the requirements change', async () => {
    const cacheDir = cacheDirOf('prj_change');
    const first = await install(newRun({ 'roles/requirements.yml': roleRequirement(role) }), { cacheDir });
    const changed = newRun({ 'roles/requirements.yml': roleRequirement(role) + roleRequirement(otherRole) });
    const second = await install(changed, { cacheDir });
    expect(second.result!.cacheHit).toBe(false);
    expect(second.result!.hash).not.toBe(first.result!.hash);
    expect(second.log[0]).toBe('baton: installing requirements (roles/requirements.yml)');
    expect(fs.existsSync(path.join(second.result!.rolesPath, otherRole.name, 'tasks', 'main.yml'))).toBe(true);
    expect(fs.readdirSync(cacheDir).sort()).toEqual([first.result!.hash, second.result!.hash].sort());
  });

  it('installs a top-level requirements.yml: its sections, or a legacy list of roles', async () => {
    const both = await install(
      newRun({
        'requirements.yml': `roles:\n${roleRequirement(role).replace(/^(?=.)/gm, '  ')}collections:\n${collectionRequirement(collection).replace(/^(?=.)/gm, '  ')}`,
      }),
      { cacheDir: cacheDirOf('prj_top') },
    );
    expect(both.refused).toBeUndefined();
    expect(fs.existsSync(path.join(both.result!.rolesPath, role.name))).toBe(true);
    expect(fs.existsSync(collection.installedAt(both.result!.collectionsPath))).toBe(true);

    const legacy = await install(newRun({ 'requirements.yml': roleRequirement(otherRole) }), {
      cacheDir: cacheDirOf('prj_top'),
    });
    expect(legacy.refused).toBeUndefined();
    expect(fs.readdirSync(legacy.result!.rolesPath)).toEqual([otherRole.name]);
    // Both directories exist even when one kind has nothing.
    expect(fs.readdirSync(legacy.result!.collectionsPath)).toEqual([]);
  });

  it('does not count a leftover temporary directory or an entry without its marker as a hit', async () => {
    const cacheDir = cacheDirOf('prj_leftover');
    const run = newRun({ 'roles/requirements.yml': roleRequirement(role) });
    const hash = requirementsHash(await findRequirements(run.projectDir));
    for (const dir of [path.join(cacheDir, `${hash}.tmp-crashed`), path.join(cacheDir, hash)]) {
      for (const d of ['roles', 'collections']) fs.mkdirSync(path.join(dir, d), { recursive: true });
    }
    fs.writeFileSync(path.join(cacheDir, `${hash}.tmp-crashed`, '.complete'), '');
    const { result, log } = await install(run, { cacheDir });
    expect(result!.cacheHit).toBe(false);
    expect(log[0]).toBe('baton: installing requirements (roles/requirements.yml)');
    expect(fs.existsSync(path.join(cacheDir, hash, '.complete'))).toBe(true);
    expect(fs.existsSync(path.join(result!.rolesPath, role.name))).toBe(true);
  });

  it('lets two runs install the same requirements at once: one entry, no leftovers', async () => {
    const cacheDir = cacheDirOf('prj_race');
    const [a, b] = await Promise.all([
      install(newRun(bothKinds()), { cacheDir }),
      install(newRun(bothKinds()), { cacheDir }),
    ]);
    expect(a.refused ?? b.refused).toBeUndefined();
    expect(a.result!.rolesPath).toBe(b.result!.rolesPath);
    expect(fs.readdirSync(cacheDir)).toEqual([a.result!.hash]);
    expect(fs.existsSync(path.join(a.result!.rolesPath, role.name, 'tasks', 'main.yml'))).toBe(true);
    expect(fs.existsSync(collection.installedAt(a.result!.collectionsPath))).toBe(true);
  });

  it('installs into the run directory when there is no cache directory', async () => {
    const run = newRun(bothKinds());
    const { result, log } = await install(run, { cacheDir: undefined });
    expect(result).toMatchObject({
      collectionsPath: path.join(run.runDir, 'requirements', 'collections'),
      rolesPath: path.join(run.runDir, 'requirements', 'roles'),
      cacheHit: false,
    });
    expect(fs.existsSync(path.join(result!.rolesPath, role.name, 'tasks', 'main.yml'))).toBe(true);
    expect(fs.existsSync(collection.installedAt(result!.collectionsPath))).toBe(true);
    expect(mode(path.join(run.runDir, 'requirements'))).toBe(0o700);
    expect(log[0]).toBe('baton: installing requirements (roles/requirements.yml, collections/requirements.yml)');
  });

  it('installs requirements that name paths in the project for the run only, never from the cache', async () => {
    const cacheDir = cacheDirOf('prj_local');
    const files = {
      'collections/requirements.yml': 'collections:\n  - name: vendored/baton.testcoll\n    type: dir\n',
    };
    const run = newRun(files);
    fs.cpSync(collection.dir, path.join(run.projectDir, 'vendored', 'baton.testcoll'), { recursive: true });
    const { result, refused, log } = await install(run, { cacheDir });
    expect(refused).toBeUndefined();
    expect(result!.collectionsPath).toBe(path.join(run.runDir, 'requirements', 'collections'));
    expect(fs.existsSync(collection.installedAt(result!.collectionsPath))).toBe(true);
    expect(log[0]).toBe(
      'baton: installing requirements (collections/requirements.yml) for this run only: they name paths in the project',
    );
    expect(fs.existsSync(cacheDir)).toBe(false);
  });

  it('refuses the run when a requirement cannot be installed, with ansible-galaxy saying why in the log', async () => {
    const cacheDir = cacheDirOf('prj_broken');
    const run = newRun({
      'roles/requirements.yml': roleRequirement({ url: `git+file://${path.join(repos, 'no-such-repo')}`, name: 'x' }),
    });
    const { result, refused, log } = await install(run, { cacheDir });
    expect(result).toBeUndefined();
    expect(refused).toMatchObject({ conclusion: 'failed', reason: 'requirements' });
    expect(refused!.message).toBe(
      'baton: installing requirements failed (exit 1): ansible-galaxy role install -r roles/requirements.yml',
    );
    expect(log[0]).toBe('baton: installing requirements (roles/requirements.yml)');
    // ansible wraps its warnings at 80 columns, where depends on the temporary paths in them (their pids' digits).
    expect(unwrapped(log)).toMatch(/does not appear to be a git repository/);
    expect(fs.readdirSync(cacheDir)).toEqual([]); // neither an entry nor a temporary directory
  });

  it('passes the galaxy server and its token through a 0600 config file, and masks the token', async () => {
    const token = `tok-${process.pid}-secret`;
    const seen: Array<string | undefined> = [];
    const server = http.createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
      const run = newRun({ 'collections/requirements.yml': 'collections:\n  - name: community.general\n' });
      const { refused, log } = await install(run, { galaxy: { server_url: url, token } });
      // The real ansible-galaxy read our config: it asked our server, with the token.
      expect(seen).toContain(`Token ${token}`);
      expect(refused).toMatchObject({ reason: 'requirements' });
      expect(log.join('\n')).toContain(url);
      expect(log.join('\n')).not.toContain(token);
      expect(fs.existsSync(path.join(run.runDir, 'galaxy.cfg'))).toBe(false);
    } finally {
      server.close();
    }
  });
});

describe('installRequirements with a fake ansible-galaxy', () => {
  const fakeEnv = (run: ReturnType<typeof newRun>, dir: string, extra: NodeJS.ProcessEnv = {}) => ({
    ...run.env,
    PATH: `${dir}:${process.env.PATH}`,
    ...extra,
  });

  it('keeps the token out of argv and the log, in a config file of mode 0600 in the run directory', async () => {
    const token = 'sEcReT-t0ken';
    const fake = fakeGalaxy(
      path.join(root, 'show-galaxy'),
      [
        'echo "args: $*"',
        'echo "config: $ANSIBLE_CONFIG mode $(stat -c %a "$ANSIBLE_CONFIG")"',
        'cat "$ANSIBLE_CONFIG"',
        'tr "\\0" " " < /proc/$$/cmdline; echo',
        'echo "home: $HOME cache: $ANSIBLE_GALAXY_CACHE_DIR progress: $ANSIBLE_GALAXY_DISPLAY_PROGRESS color: $ANSIBLE_NOCOLOR"',
      ].join('\n'),
    );
    const run = newRun({ 'roles/requirements.yml': roleRequirement(role) });
    const { result, log } = await install(run, {
      env: fakeEnv(run, fake),
      galaxy: { server_url: 'https://galaxy.example/api/', token },
    });
    expect(result!.cacheHit).toBe(false);
    expect(log.join('\n')).not.toContain(token);
    // Masked only where the config was printed: neither argv nor anything else held it.
    expect(log.filter((l) => l.includes('***'))).toEqual(['token=***']);
    expect(log).toContain('args: role install -r roles/requirements.yml -p <requirements>/roles');
    expect(log).toContain(`config: ${path.join(run.runDir, 'galaxy.cfg')} mode 600`);
    expect(log).toEqual(
      expect.arrayContaining(['[galaxy]', 'server_list = baton', 'url=https://galaxy.example/api/', 'token=***']),
    );
    expect(log).toContain(
      `home: ${path.join(run.runDir, 'galaxy', 'home')} cache: ${path.join(run.runDir, 'galaxy', 'cache')} progress: False color: True`,
    );
    // Gone once the install is over: the playbook may read the run directory.
    expect(fs.existsSync(path.join(run.runDir, 'galaxy.cfg'))).toBe(false);

    const plain = newRun({ 'roles/requirements.yml': roleRequirement(role) });
    const noServer = await install(plain, { cacheDir: undefined, env: fakeEnv(plain, fake) });
    expect(noServer.log).toContain(`config: ${path.join(plain.runDir, 'galaxy.cfg')} mode 600`);
    expect(noServer.log).not.toContain('[galaxy]'); // an empty config of ours, never the project's ansible.cfg
  });

  it('refuses a token or URL that would break the config file', async () => {
    for (const galaxy of [
      { server_url: 'https://galaxy.example/api/', token: 'abc\n[galaxy_server.evil]' },
      { server_url: 'https://galaxy.example/api/ ;x', token: 'abc' },
    ]) {
      const refused = await install(newRun({ 'roles/requirements.yml': roleRequirement(role) }), { galaxy });
      expect(refused.refused).toMatchObject({ conclusion: 'failed', reason: 'requirements' });
      expect(refused.log).toEqual([]);
    }
  });

  it('kills the whole process group on timeout and refuses the run', async () => {
    const cacheDir = cacheDirOf('prj_timeout');
    const pidFile = path.join(root, 'timeout.pid');
    const fake = fakeGalaxy(path.join(root, 'hanging-galaxy'), 'sleep 300 & echo $! > "$PIDFILE"\necho started\nwait');
    const run = newRun({ 'roles/requirements.yml': roleRequirement(role) });
    const started = Date.now();
    const { refused, log } = await install(run, {
      cacheDir,
      timeoutMs: 1500,
      env: fakeEnv(run, fake, { PIDFILE: pidFile }),
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(refused).toMatchObject({ conclusion: 'failed', reason: 'requirements' });
    expect(refused!.message).toBe('baton: installing requirements timed out after 1.5 s');
    expect(log).toContain('started');
    expect(await waitGone(Number(fs.readFileSync(pidFile, 'utf8')))).toBe(true);
    expect(fs.readdirSync(cacheDir)).toEqual([]);
  });

  it('kills the process group when the run is canceled, and says why it stopped', async () => {
    const pidFile = path.join(root, 'abort.pid');
    const fake = fakeGalaxy(path.join(root, 'hanging-galaxy2'), 'sleep 300 & echo $! > "$PIDFILE"\necho started\nwait');
    for (const [reason, expected] of [
      [undefined, { conclusion: 'canceled', reason: 'canceled' }],
      [new ShutdownAbort(), { conclusion: 'canceled', reason: 'shutdown' }],
    ] as const) {
      const controller = new AbortController();
      const run = newRun({ 'roles/requirements.yml': roleRequirement(role) });
      const { refused } = await install(run, {
        signal: controller.signal,
        env: fakeEnv(run, fake, { PIDFILE: pidFile }),
        log: (line) => {
          if (line === 'started') setTimeout(() => controller.abort(reason), 100);
        },
      });
      expect(refused).toMatchObject(expected);
      expect(refused!.message).toMatch(/^baton: installing requirements was stopped: /);
      expect(await waitGone(Number(fs.readFileSync(pidFile, 'utf8')))).toBe(true);
    }
  });

  it('reports the exit code of a failing ansible-galaxy', async () => {
    const fake = fakeGalaxy(path.join(root, 'exit3-galaxy'), 'echo "ERROR! something broke" >&2\nexit 3');
    const run = newRun({ 'collections/requirements.yml': 'collections: []\n' });
    const { refused, log } = await install(run, { env: fakeEnv(run, fake) });
    expect(refused!.message).toBe(
      'baton: installing requirements failed (exit 3): ansible-galaxy collection install -r collections/requirements.yml',
    );
    expect(log).toContain('ERROR! something broke');
  });

  it('bounds each logged line and the whole output', async () => {
    const fake = fakeGalaxy(
      path.join(root, 'loud-galaxy'),
      // One 100 000-character line, then 3 MB of 100-character lines.
      `head -c 100000 /dev/zero | tr '\\0' 'x'; echo; head -c 3000000 /dev/zero | tr '\\0' 'y' | fold -w 99`,
    );
    const run = newRun({ 'roles/requirements.yml': roleRequirement(role) });
    const { result, log } = await install(run, { env: fakeEnv(run, fake) });
    expect(result!.cacheHit).toBe(false);
    expect(log[1]).toBe(`${'x'.repeat(MAX_REQUIREMENTS_LINE_CHARS)} … (line cut)`);
    expect(log[2]).toBe('y'.repeat(99));
    expect(log.at(-1)).toBe(
      `baton: ansible-galaxy printed more than ${MAX_REQUIREMENTS_LOG_BYTES} bytes; the rest is not logged`,
    );
    const logged = log.slice(1, -1).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    expect(logged).toBeLessThanOrEqual(MAX_REQUIREMENTS_LOG_BYTES);
    expect(logged).toBeGreaterThan(MAX_REQUIREMENTS_LOG_BYTES - 200);
  });
});

describe('installRequirements in the bubblewrap sandbox', () => {
  beforeAll(async () => {
    // About the real bwrap: without it these tests must fail, not pass vacuously.
    expect(await probeBwrap()).toEqual({ available: true });
  });

  it('installs into the cache inside the hidden data directory, which it cannot otherwise read', async () => {
    const cacheDir = cacheDirOf('prj_sandbox');
    const sandbox = { mode: 'bwrap' as const, hidden: [dataDir] };
    const ok = await install(newRun(bothKinds()), { cacheDir, sandbox });
    expect(ok.refused).toBeUndefined();
    expect(fs.existsSync(path.join(ok.result!.rolesPath, role.name, 'tasks', 'main.yml'))).toBe(true);
    expect(fs.existsSync(collection.installedAt(ok.result!.collectionsPath))).toBe(true);
    expect(ok.result!.rolesPath.startsWith(cacheDir)).toBe(true);

    // A role repository inside the data directory: found without the sandbox, invisible in it.
    const secretRole = createRoleRepo(path.join(dataDir, 'secret'), 'secret_role');
    const files = { 'roles/requirements.yml': roleRequirement(secretRole) };
    const outside = await install(newRun(files), { cacheDir: undefined });
    expect(outside.refused).toBeUndefined();
    const inside = await install(newRun(files), { cacheDir, sandbox });
    expect(inside.refused).toMatchObject({ reason: 'requirements' });
    expect(unwrapped(inside.log)).toMatch(/does not appear to be a git repository/);
  });

  it('lets ansible-galaxy write only its install target and the run directory', async () => {
    const canary = path.join(root, 'written-from-the-sandbox');
    const fake = fakeGalaxy(
      path.join(root, 'writing-galaxy'),
      [
        `{ echo x > '${canary}'; } 2>/dev/null && echo "wrote outside" || echo "outside is read-only"`,
        'touch "$6/from-galaxy" && echo "wrote target"',
        'touch "$TMPDIR/from-galaxy" && echo "wrote run dir"',
      ].join('\n'),
    );
    const run = newRun({ 'roles/requirements.yml': roleRequirement(role) });
    const { result, log } = await install(run, {
      cacheDir: cacheDirOf('prj_sandbox_writes'),
      env: { ...run.env, PATH: `${fake}:${process.env.PATH}` },
      sandbox: { mode: 'bwrap', hidden: [dataDir] },
    });
    expect(log.slice(1)).toEqual(['outside is read-only', 'wrote target', 'wrote run dir']);
    expect(fs.existsSync(canary)).toBe(false);
    expect(fs.existsSync(path.join(result!.rolesPath, 'from-galaxy'))).toBe(true);
  });
});
