import { afterAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { RunBundle, RunEvent } from '@baton/contracts';
import { createRepo, inlineBundle, play, runCollecting, sshKeyPair, startSshd, tempDir } from '../testing/index.js';
import type { RunPlaybookOptions } from './run-playbook.js';
import { hasControllingTerminal } from './run-process.js';

const workRoot = tempDir('baton-playbook-test');
afterAll(() => fs.rmSync(workRoot, { recursive: true, force: true }));

const runIn = (bundle: RunBundle, opts: Partial<RunPlaybookOptions> = {}) =>
  runCollecting(bundle, { workRoot, ...opts });

const runDirsLeft = () => fs.readdirSync(workRoot).filter((n) => n.startsWith('baton-run-'));

// Every behaviour holds inside the bubblewrap sandbox as well: the agent socket and FIFOs in the run directory,
// ssh to loopback, cancel through the process group, local tasks needing a temp directory (check-mode copy).
describe.each(['off', 'bwrap'] as const)('runPlaybook against localhost (sandbox %s)', (mode) => {
  const run = (bundle: RunBundle, opts: Partial<RunPlaybookOptions> = {}) =>
    runIn(bundle, { sandbox: { mode, hidden: [] }, ...opts });

  it('succeeds with per-host stats, ordered gap-free events and a final status', async () => {
    const { outcome, events, log, kinds } = await run(
      inlineBundle(play('    - debug: msg=hello-from-baton\n    - command: echo changed\n')),
    );
    expect(outcome).toMatchObject({ exitCode: 0, conclusion: 'succeeded' });
    expect(outcome.stats).toEqual({
      localhost: { ok: 2, changed: 1, failed: 0, unreachable: 0, skipped: 0, rescued: 0, ignored: 0 },
    });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.every((e) => e.run_id === 'run_test')).toBe(true);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'playbook_on_start',
        'playbook_on_play_start',
        'playbook_on_task_start',
        'runner_on_ok',
        'playbook_on_stats',
      ]),
    );
    expect(kinds.indexOf('playbook_on_start')).toBeLessThan(kinds.indexOf('playbook_on_stats'));
    expect(events.at(-1)).toMatchObject({
      kind: 'status',
      data: { status: 'finished', conclusion: 'succeeded', exit_code: 0, stats: outcome.stats },
    });
    expect(log).toContain('hello-from-baton');
    expect(log).toContain('PLAY RECAP');
    // log chunks tile the log without gaps, and their count is what the outcome reports
    const logEvents = events.filter((e) => e.kind === 'log');
    logEvents.forEach((e, i) => expect(e.data.start_line).toBe(i === 0 ? 1 : logEvents[i - 1]!.data.end_line));
    expect(logEvents.at(-1)!.data.end_line).toBe(outcome.logLines + 1);
    const ok = events.find((e) => e.kind === 'runner_on_ok' && e.data.task === 'command')!;
    expect(ok.data).toMatchObject({
      host: 'localhost',
      changed: true,
      res: expect.objectContaining({ stdout: 'changed' }),
    });
    expect(JSON.stringify(ok.data.res)).not.toContain('_ansible_');
    // an ansible event comes after the log lines it printed
    const okLog = events.find((e) => e.kind === 'log' && (e.data.text as string).includes('changed: [localhost]'))!;
    expect(okLog.seq).toBeLessThan(ok.seq);
    expect(runDirsLeft()).toEqual([]);
  });

  it('reads a JSON inventory saved as YAML (a shard) with the yaml plugin, every host and no other', async () => {
    const shard = JSON.stringify(
      {
        all: {
          children: {
            app: { hosts: { 'shard-a': { ansible_connection: 'local' }, 'shard-b': { ansible_connection: 'local' } } },
          },
        },
      },
      null,
      2,
    );
    const { outcome } = await run(
      inlineBundle(play('    - debug: msg=hi\n'), { inventory: { content: shard, format: 'yaml' } }),
    );
    expect(outcome.conclusion).toBe('succeeded');
    expect(Object.keys(outcome.stats).sort()).toEqual(['shard-a', 'shard-b']);
  });

  it('fails with stats when a task fails', async () => {
    const { outcome, kinds } = await run(inlineBundle(play('    - command: /bin/false\n')));
    expect(outcome.conclusion).toBe('failed');
    expect(outcome.exitCode).not.toBe(0);
    expect(outcome.stats.localhost).toMatchObject({ failed: 1, ok: 0 });
    expect(kinds).toContain('runner_on_failed');
  });

  it('fails with the unreachable host counted', async () => {
    const bundle = inlineBundle(play('    - ping:\n'), {
      inventory: { content: 'ghost ansible_host=127.0.0.1 ansible_port=1 ansible_connection=ssh\n', format: 'ini' },
    });
    const { outcome, kinds } = await run(bundle);
    expect(outcome.conclusion).toBe('failed');
    expect(outcome.reason).toBeUndefined();
    expect(outcome.stats.ghost).toMatchObject({ unreachable: 1 });
    expect(kinds).toContain('runner_on_unreachable');
  });

  it('reports a playbook that does not parse as bad_playbook with the parser message in the log', async () => {
    const { outcome, log } = await run(inlineBundle('- hosts: all\n  tasks:\n    - debug: msg=a\n   bad: [indent\n'));
    expect(outcome).toMatchObject({ conclusion: 'failed', reason: 'bad_playbook', stats: {} });
    expect(log).toMatch(/ERROR!.*(Syntax|YAML|parsing)/is);
  });

  it('in check mode reports changed without changing anything', async () => {
    const target = path.join(workRoot, 'check-mode-target');
    const { outcome, events } = await run(
      inlineBundle(play(`    - copy: content=x dest=${target}\n`), { check: true }),
    );
    expect(outcome.conclusion).toBe('succeeded');
    expect(outcome.stats.localhost).toMatchObject({ changed: 1 });
    expect(events.find((e) => e.kind === 'runner_on_ok')!.data.changed).toBe(true);
    expect(fs.existsSync(target)).toBe(false);
  });

  it('passes extra vars, limit and verbosity to the play', async () => {
    const bundle = inlineBundle(play('    - debug: msg="color is {{ color }}"\n'), {
      extra_vars: { color: 'ultramarine' },
      limit: 'localhost',
      verbosity: 1,
      inventory: { content: 'localhost ansible_connection=local\nother ansible_connection=local\n', format: 'ini' },
    });
    const { outcome, log } = await run(bundle);
    expect(outcome.conclusion).toBe('succeeded');
    expect(log).toContain('color is ultramarine');
    expect(Object.keys(outcome.stats)).toEqual(['localhost']);
  });

  it('stops a run past its timeout: error / timeout', async () => {
    const { outcome } = await run(inlineBundle(play('    - command: sleep 30\n'), { timeout_s: 1 }));
    expect(outcome).toMatchObject({ conclusion: 'error', reason: 'timeout' });
    expect(runDirsLeft()).toEqual([]);
  });

  it('cancels a running task: canceled, no process left, run directory removed', async () => {
    const marker = `baton-cancel-${process.pid}`;
    const controller = new AbortController();
    const running = run(inlineBundle(play(`    - command: sh -c 'sleep 30; :' ${marker}\n`)), {
      signal: controller.signal,
      interruptGraceMs: 2_000,
      terminateGraceMs: 1_000,
      onEvent: (e) => {
        if (e.kind === 'playbook_on_task_start') setTimeout(() => controller.abort(), 300);
      },
    });
    const { outcome, events, log } = await running;
    expect(outcome).toMatchObject({ conclusion: 'canceled', reason: 'canceled' });
    // SIGINT reached ansible itself, which stopped on its own (inside bwrap too), before any SIGKILL
    expect(log).toContain('User interrupted execution');
    expect(events.at(-1)!.data).toMatchObject({ status: 'finished', conclusion: 'canceled' });
    expect(() => execFileSync('pgrep', ['-f', marker])).toThrow(); // pgrep exits 1 when nothing matches
    expect(runDirsLeft()).toEqual([]);
  });

  it('serves the vault password through a FIFO and keeps every bundle secret out of events and log', async () => {
    const vaultPassword = 'vault-canary-7f3a9c';
    const envSecret = 'env-canary-b41d22';
    const becomeSecret = 'become-canary-99e0aa';
    const passwordFile = path.join(workRoot, 'vault-pass');
    fs.writeFileSync(passwordFile, vaultPassword);
    const encrypted = execFileSync(
      'ansible-vault',
      ['encrypt_string', '--vault-password-file', passwordFile, 'decrypted-ok', '--name', 'vaulted'],
      { encoding: 'utf8', env: { PATH: process.env.PATH, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', HOME: workRoot } },
    );
    fs.rmSync(passwordFile);
    const content = `- hosts: all\n  gather_facts: false\n  vars:\n${encrypted.replace(/^/gm, '    ')}\n  tasks:\n    - debug: msg="vault says {{ vaulted }}"\n    - command: echo {{ lookup('env', 'CANARY_ENV') }}\n      no_log: true\n`;
    const { outcome, events, log } = await run(
      inlineBundle(content, {
        credentials: [
          { type: 'vault_password', inputs: { password: vaultPassword } },
          { type: 'env', inputs: { variables: { CANARY_ENV: envSecret } } },
          { type: 'become_password', inputs: { password: becomeSecret } },
        ],
      }),
    );
    expect(outcome.conclusion).toBe('succeeded');
    expect(log).toContain('vault says decrypted-ok');
    const everything = JSON.stringify(events);
    for (const secret of [vaultPassword, envSecret, becomeSecret]) expect(everything).not.toContain(secret);
    const noLogResult = events.find((e) => e.kind === 'runner_on_ok' && e.data.task === 'command')!;
    expect(noLogResult.data.res).toBeUndefined();
  });

  it('masks secrets that JSON escapes, and a secret containing a shorter one, whole', async () => {
    const quoted = 'pa"ss\\w0rd\tx';
    const short = 'abcd';
    const long = 'abcdefgh99';
    const content = `- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg="{{ lookup('env', 'Q') }} {{ lookup('env', 'S') }} {{ lookup('env', 'L') }}"\n`;
    const { outcome, events } = await run(
      inlineBundle(content, {
        credentials: [{ type: 'env', inputs: { variables: { Q: quoted, S: short, L: long } } }],
      }),
    );
    expect(outcome.conclusion).toBe('succeeded');
    const strings: string[] = [];
    const collect = (v: unknown): void => {
      if (typeof v === 'string') strings.push(v);
      else if (v && typeof v === 'object')
        for (const [k, x] of Object.entries(v)) {
          strings.push(k);
          collect(x);
        }
    };
    collect(events);
    const debug = events.find((e) => e.kind === 'runner_on_ok' && e.data.task === 'debug');
    expect(JSON.stringify(debug?.data.res)).toContain('********');
    for (const leak of [quoted, short, long, 'efgh99']) expect(strings.filter((x) => x.includes(leak))).toEqual([]);
  });

  it('runs a playbook from a project checked out at the bundle commit, and refuses paths outside it', async () => {
    const repo = createRepo(tempDir('baton-playbook-repo'));
    const commit = repo.commitFiles({ 'plays/hello.yml': play('    - debug: msg="from the project"\n') });
    const git = { url: repo.url, commit };
    const project = (p: string): RunBundle => ({ ...inlineBundle(''), playbook: { source: 'project', path: p, git } });

    const good = await run(project('plays/hello.yml'));
    expect(good.outcome.conclusion).toBe('succeeded');
    expect(good.log).toContain('from the project');

    const escaping = await run(project('../../etc/passwd'));
    expect(escaping.outcome).toMatchObject({ conclusion: 'failed', reason: 'bad_playbook', exitCode: null });
    expect(escaping.log).toContain('not inside the project');
    expect(runDirsLeft()).toEqual([]);
    fs.rmSync(path.dirname(repo.dir), { recursive: true, force: true });
  });

  it('connects over ssh with the key from an ssh-agent owned by the run, and leaves no agent or ssh master behind', async () => {
    const sshDir = tempDir('baton-playbook-sshd');
    const key = sshKeyPair(sshDir, 'run_key');
    const sshd = await startSshd(sshDir, [key.publicKey]);
    try {
      const bundle = inlineBundle(play('    - ping:\n'), {
        inventory: {
          content: `target ansible_host=127.0.0.1 ansible_port=${sshd.port} ansible_connection=ssh ansible_python_interpreter=/usr/bin/python3\n`,
          format: 'ini',
        },
        credentials: [{ type: 'ssh_key', inputs: { private_key: key.privateKey, username: 'root' } }],
      });
      const { outcome, events } = await run(bundle);
      expect(outcome.conclusion).toBe('succeeded');
      expect(outcome.stats.target).toMatchObject({ ok: 1, unreachable: 0 });
      const keyBody = key.privateKey.split('\n')[1]!;
      expect(JSON.stringify(events)).not.toContain(keyBody);
      // the agent socket and the ControlPersist master both live under the run directory
      expect(() => execFileSync('pgrep', ['-f', `${workRoot}/baton-run-`])).toThrow();
      expect(runDirsLeft()).toEqual([]);
    } finally {
      await sshd.stop();
      fs.rmSync(sshDir, { recursive: true, force: true });
    }
  });

  it('names files relative to the project root in events, and never the run directory', async () => {
    const repo = createRepo(tempDir('baton-playbook-paths'));
    fs.mkdirSync(path.join(repo.dir, 'plays', 'roles', 'greet', 'tasks'), { recursive: true });
    fs.writeFileSync(
      path.join(repo.dir, 'plays', 'roles', 'greet', 'tasks', 'main.yml'),
      '- debug: msg=from-the-role\n',
    );
    const tasks = '    - debug: msg="dir={{ playbook_dir }}"\n    - command: pwd\n    - include_tasks: missing.yml\n';
    fs.writeFileSync(path.join(repo.dir, 'plays', 'site.yml'), play(tasks, '  roles: [greet]\n'));
    repo.git('add', '.');
    repo.git('commit', '-q', '-m', 'a playbook with a role');
    const bundle: RunBundle = {
      ...inlineBundle(''),
      playbook: { source: 'project', path: 'plays/site.yml', git: { url: repo.url, commit: repo.head() } },
    };
    try {
      const { outcome, events, log } = await run(bundle);
      expect(outcome.conclusion).toBe('failed'); // the include names a missing file: its error names a path too
      expect(events.find((e) => e.kind === 'playbook_on_start')!.data.playbook).toBe('plays/site.yml');
      const paths = events.filter((e) => e.kind === 'playbook_on_task_start').map((e) => e.data.task_path as string);
      expect(paths[0]).toMatch(/^plays\/roles\/greet\/tasks\/main\.yml:1$/);
      expect(paths.slice(1)).toEqual([
        expect.stringMatching(/^plays\/site\.yml:\d+$/),
        expect.stringMatching(/^plays\/site\.yml:\d+$/),
        expect.stringMatching(/^plays\/site\.yml:\d+$/),
      ]);
      expect(events.find((e) => e.kind === 'runner_on_ok' && e.data.task === 'command')!.data.res).toMatchObject({
        stdout: 'plays',
      }); // ansible runs local tasks in the playbook's directory
      expect(log).toContain('dir=plays');
      expect(log).toContain('missing.yml');
      expect(JSON.stringify(events)).not.toContain('baton-run-');
    } finally {
      fs.rmSync(path.dirname(repo.dir), { recursive: true, force: true });
    }

    const inline = await run(inlineBundle(play('    - debug: msg="dir={{ playbook_dir }}"\n')));
    expect(inline.events.find((e) => e.kind === 'playbook_on_start')!.data.playbook).toBe('playbook.yml');
    expect(inline.events.find((e) => e.kind === 'playbook_on_task_start')!.data.task_path).toBe('playbook.yml:4');
    expect(inline.log).toContain('dir=.');
    expect(JSON.stringify(inline.events)).not.toContain('baton-run-');
  });
});

const finals = (events: RunEvent[]) => events.filter((e) => e.kind === 'status' && e.data.status === 'finished');

describe('runPlaybook process placement (no controlling terminal here, as under systemd)', () => {
  /** A pid's /proc stat fields after its name in parentheses (which may hold spaces): [0] is field 3. */
  const statOf = (pid: number | 'self') =>
    fs
      .readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
  /** Process group and session (fields 5 and 6). */
  const groupAndSession = (pid: number | 'self') => {
    const fields = statOf(pid);
    return { pgid: Number(fields[2]), sid: Number(fields[3]) };
  };

  it('puts ansible in a process group of its own (what cancel signals) but keeps this session, so SCHED_IDLE weighs against the server', async () => {
    expect(hasControllingTerminal()).toBe(false);
    let seen: { pgid: number; sid: number } | undefined;
    let spawned = 0;
    const { outcome } = await runIn(inlineBundle(play('    - command: sleep 1\n')), {
      sandbox: { mode: 'off', hidden: [] },
      onSpawn: (pid) => {
        spawned = pid;
        // perl makes the group within milliseconds of the spawn; look while the playbook sleeps.
        setTimeout(() => {
          seen = groupAndSession(pid);
        }, 300);
      },
    });
    expect(outcome.conclusion).toBe('succeeded');
    expect(seen).toEqual({ pgid: spawned, sid: groupAndSession('self').sid });
    expect(groupAndSession('self').pgid).not.toBe(spawned);
  });

  it.each(['off', 'bwrap'] as const)(
    "runs ansible at the sandbox's CPU priority (sandbox %s), SCHED_IDLE without one",
    async (mode) => {
      /** Scheduling policy and nice value (fields 41 and 19). */
      const scheduling = (pid: number | 'self') => {
        const fields = statOf(pid);
        return { policy: Number(fields[38]), nice: Number(fields[16]) };
      };
      const own = scheduling('self');
      const seen: Array<{ policy: number; nice: number }> = [];
      for (const priority of ['low', undefined] as const) {
        const { outcome } = await runIn(inlineBundle(play('    - command: sleep 1\n')), {
          sandbox: { mode, hidden: [], priority },
          onSpawn: (pid) => void setTimeout(() => seen.push(scheduling(pid)), 300),
        });
        expect(outcome.conclusion).toBe('succeeded');
      }
      // SCHED_BATCH 10 nicer than this process, then SCHED_IDLE.
      expect(seen).toEqual([
        { policy: 3, nice: own.nice + 10 },
        { policy: 5, nice: own.nice },
      ]);
    },
  );
});

describe('runPlaybook when the executor itself fails', () => {
  it('ends with one final error / executor_error status when the run directory cannot be created', async () => {
    const { outcome, events, log } = await runIn(inlineBundle(play('    - ping:\n')), {
      workRoot: path.join(workRoot, 'does-not-exist'),
    });
    expect(outcome).toMatchObject({ conclusion: 'error', reason: 'executor_error', exitCode: null, stats: {} });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]!.data).toEqual({ status: 'running' });
    expect(finals(events)).toEqual([events.at(-1)]);
    expect(events.at(-1)!.data).toEqual({
      status: 'finished',
      conclusion: 'error',
      reason: 'executor_error',
      exit_code: null,
      stats: {},
    });
    expect(log).toMatch(/^baton: the executor failed: ENOENT/m);
  });

  it('stops ansible and ends error / executor_error when handling an event throws', async () => {
    const marker = `baton-broken-consumer-${process.pid}`;
    let thrown = false;
    const { outcome, events, log } = await runIn(inlineBundle(play(`    - command: sh -c 'sleep 30; :' ${marker}\n`)), {
      interruptGraceMs: 2_000,
      terminateGraceMs: 1_000,
      onEvent: (e) => {
        if (e.kind === 'playbook_on_task_start' && !thrown) {
          thrown = true;
          throw new Error('the consumer broke');
        }
      },
    });
    expect(thrown).toBe(true);
    expect(outcome).toMatchObject({ conclusion: 'error', reason: 'executor_error' });
    expect(finals(events)).toEqual([events.at(-1)]);
    expect(events.at(-1)!.data).toMatchObject({ status: 'finished', conclusion: 'error', reason: 'executor_error' });
    expect(log).toContain('baton: the executor failed: the consumer broke');
    expect(() => execFileSync('pgrep', ['-f', marker])).toThrow();
    expect(runDirsLeft()).toEqual([]);
  });

  it('gives the caller what it could not clean up, after a final status that does not wait for the clean-up', async () => {
    // An immutable file (root may set it, not remove it) makes removing the run directory fail.
    const { outcome, events, log } = await runIn(
      inlineBundle(
        play(
          '    - file: path={{ playbook_dir }}/stuck state=touch\n    - command: chattr +i {{ playbook_dir }}/stuck\n',
        ),
      ),
    );
    const left = runDirsLeft();
    try {
      expect(outcome.conclusion).toBe('succeeded');
      expect(finals(events)).toEqual([events.at(-1)]);
      expect(events.at(-1)!.data).toMatchObject({ status: 'finished', conclusion: 'succeeded' });
      expect(log).not.toContain('cleanup');
      expect(outcome.cleanupProblems).toEqual([
        expect.stringMatching(/^removing the run directory: E[A-Z]+: .*'<run dir>\/stuck'$/),
      ]);
      expect(left).toHaveLength(1);
    } finally {
      for (const dir of left) {
        execFileSync('chattr', ['-i', path.join(workRoot, dir, 'stuck')]);
        fs.rmSync(path.join(workRoot, dir), { recursive: true, force: true });
      }
    }
  });

  it('ends error / executor_error when the sandbox cannot be set up', async () => {
    // The run directory's parent is hidden in the sandbox; hiding the root itself is refused.
    const { outcome, events, log } = await runIn(inlineBundle(play('    - ping:\n')), {
      sandbox: { mode: 'bwrap', hidden: ['/'] },
    });
    expect(outcome).toMatchObject({ conclusion: 'error', reason: 'executor_error', exitCode: null });
    expect(finals(events)).toHaveLength(1);
    expect(log).toContain('baton: the executor failed: the sandbox cannot hide the root directory');
    expect(runDirsLeft()).toEqual([]);
  });
});

describe('runPlaybook output caps', () => {
  // The output limit (maxLogBytes): run-playbook.output.test.ts.
  it('replaces an event res larger than maxEventResBytes with its size', async () => {
    const { outcome, events } = await runIn(
      inlineBundle(play('    - command: seq 1 5000\n    - command: echo small\n')),
      { maxEventResBytes: 2_000 },
    );
    expect(outcome.conclusion).toBe('succeeded');
    const [big, small] = events.filter((e) => e.kind === 'runner_on_ok');
    expect(big!.data.res).toEqual({ truncated: true, bytes: expect.any(Number) });
    expect((big!.data.res as { bytes: number }).bytes).toBeGreaterThan(2_000 + 5000 * 2);
    expect(small!.data.res).toMatchObject({ stdout: 'small', rc: 0 });
  });
});
