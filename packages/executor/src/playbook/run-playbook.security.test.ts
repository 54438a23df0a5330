// What a run's credentials and project code can NOT do: env credentials reach ansible only (never the processes
// around it, never argv or disk), reserved names are left out, secrets are masked in every printed form, a project
// plugin cannot forge Baton's own events on the callback pipe. And a shutdown is told apart from a cancel.
import { afterAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RunBundle } from '@baton/contracts';
import { createRepo, inlineBundle as testBundle, play, runCollecting, tempDir } from '../testing/index.js';
import { type RunPlaybookOptions, ShutdownAbort } from './run-playbook.js';

const workRoot = tempDir('baton-playbook-security');
afterAll(() => fs.rmSync(workRoot, { recursive: true, force: true }));

const inlineBundle = (content: string, extra: Partial<RunBundle> = {}): RunBundle =>
  testBundle(content, { run_id: 'run_sec', ...extra });

const run = (bundle: RunBundle, opts: Partial<RunPlaybookOptions> = {}) => runCollecting(bundle, { workRoot, ...opts });

/** Every string of the events, keys included: log text, task names, results. */
function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      stringsOf(v, out);
    }
  }
  return out;
}

const runDir = () => {
  const dirs = fs.readdirSync(workRoot).filter((n) => n.startsWith('baton-run-'));
  expect(dirs).toHaveLength(1);
  return path.join(workRoot, dirs[0]!);
};

/** Regular files under `dir` (FIFOs and sockets are not read: opening a FIFO would take a secret or block). */
function regularFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

/** Processes whose command line holds `text`. */
function processesWithArg(text: string): string[] {
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    });
}

describe.each(['off', 'bwrap'] as const)('env credentials (sandbox %s)', (mode) => {
  // Quotes, $, backquotes and a newline: the value must arrive byte for byte, never expanded by a shell.
  const value = `it's $HOME \`id\` "q" \\ ${process.pid}\nsecond line`;
  const digest = createHash('sha256').update(value).digest('hex');

  it('reach the playbook only: not argv, not disk, not the processes around ansible; reserved names are left out', async () => {
    let spawned: number | undefined;
    const seen: { outerEnviron?: string; filesWithValue?: string[]; processesWithValue?: string[] } = {};
    const tasks = [
      // One task that runs while the test looks around.
      `    - shell: printf '%s' "$GOOD_VAR" | sha256sum; sleep 1\n`,
      `    - shell: printf 'good=%s|' "$GOOD_VAR"; echo "preload=\${LD_PRELOAD-unset} audit=\${LD_AUDIT-unset} home=$HOME"\n      register: probe\n`,
      '    - debug: var=probe.stdout\n',
    ].join('');
    const bundle = inlineBundle(play(tasks), {
      credentials: [
        {
          type: 'env',
          inputs: {
            variables: {
              GOOD_VAR: value,
              // Stored before these names were refused at create (or a forged bundle): never set, anywhere.
              LD_PRELOAD: '/nonexistent/baton-preload.so',
              LD_AUDIT: './baton-audit.so',
              PYTHONSTARTUP: '/nonexistent/startup.py',
              ANSIBLE_CONFIG: '/nonexistent/ansible.cfg',
              ANSIBLE_STDOUT_CALLBACK: 'oneline',
              GIT_SSH_COMMAND: 'false',
              'BAD;NAME': 'x',
            },
          },
        },
      ],
    });
    const { outcome, events, log } = await run(bundle, {
      sandbox: { mode, hidden: [] },
      onSpawn: (pid) => (spawned = pid),
      onEvent: (e) => {
        if (e.kind !== 'playbook_on_task_start' || seen.outerEnviron !== undefined) return;
        seen.outerEnviron = fs.readFileSync(`/proc/${spawned}/environ`, 'utf8');
        const dir = runDir();
        seen.filesWithValue = regularFiles(dir).filter((f) =>
          fs.readFileSync(f, 'utf8').includes(`${process.pid}\nsecond line`),
        );
        seen.processesWithValue = processesWithArg(`${process.pid}\nsecond line`);
      },
    });
    expect(outcome.conclusion).toBe('succeeded');
    // the value arrived whole
    const results = events
      .filter((e) => e.kind === 'runner_on_ok')
      .map((e) => (e.data.res as { stdout: string }).stdout);
    expect(results[0]).toBe(`${digest}  -`);
    // …and is masked wherever it is printed
    expect(results[1]).toBe('good=********|preload=unset audit=unset home=home'); // the run's private HOME, shown relative
    expect(log).toContain('"probe.stdout": "good=********|preload=unset');
    expect(stringsOf(events).filter((s) => s.includes(`${process.pid}\nsecond`) || s.includes('second line'))).toEqual(
      [],
    );
    // bwrap runs outside the sandbox: the spawned process (bwrap) has only the base environment; without the
    // sandbox the spawned process ends up as ansible-playbook itself, which gets the variable
    expect(seen.outerEnviron!.split('\0').some((kv) => kv.startsWith('GOOD_VAR='))).toBe(mode === 'off');
    expect(seen.outerEnviron).not.toContain('LD_');
    expect(seen.filesWithValue).toEqual([]);
    expect(seen.processesWithValue).toEqual([]);
    // no program of the chain (perl, sh, bwrap, ansible) was asked to preload or audit anything
    expect(log).not.toMatch(/ld\.so|cannot be preloaded|audit interface/);
    for (const name of [
      'LD_PRELOAD',
      'LD_AUDIT',
      'PYTHONSTARTUP',
      'ANSIBLE_CONFIG',
      'ANSIBLE_STDOUT_CALLBACK',
      'GIT_SSH_COMMAND',
    ]) {
      expect(log).toContain(`baton: the env credential variable ${name} was not set: the name is reserved\n`);
    }
    expect(log).toContain('baton: the env credential variable "BAD;NAME" was not set: not a variable name\n');
    // Baton's own lines come first: an ansible event's line range still points at the lines it printed
    const lines = log.split('\n');
    const playStart = events.find((e) => e.kind === 'playbook_on_play_start')!;
    expect(
      lines.slice((playStart.data.start_line as number) - 1, (playStart.data.end_line as number) - 1).join('\n'),
    ).toContain('PLAY [all]');
    expect(lines.slice(0, 5).every((l) => l.startsWith('baton: the env credential variable'))).toBe(true);
  });
});

describe('secret masking', () => {
  it('masks JSON-escaped and repr forms and each long line of a multi-line secret, as ansible prints them', async () => {
    const quoted = 'pa"ss\\word-x9';
    const both = `a'b"c-z5`;
    const multi = 'first-line-aaaa\nsecond-line-bbbb\nshort';
    const vars = `  vars:\n    sq: "{{ lookup('env', 'Q') }}"\n    sm: "{{ lookup('env', 'M') }}"\n    sb: "{{ lookup('env', 'B') }}"\n`;
    const tasks = [
      '    - debug: var=sq\n',
      '    - debug: var=sm\n',
      '    - debug: var=sb\n',
      '    - debug: msg="{{ [sq, sm, sb] }}"\n',
      '    - debug: msg="{{ [sq, sm, sb] | string }}"\n', // Python's repr of a list of strings
      `    - shell: printf '%s\\n' "$Q" "$M" "$B"\n`, // -v: the result as JSON, stdout_lines too
    ].join('');
    const bundle = inlineBundle(play(tasks, vars), {
      verbosity: 1,
      credentials: [{ type: 'env', inputs: { variables: { Q: quoted, M: multi, B: both } } }],
    });
    const { outcome, events, log } = await run(bundle);
    expect(outcome.conclusion).toBe('succeeded');
    expect(log).toContain('"sq": "********"');
    expect(log).toContain('"sm": "********"');
    expect(log).toContain('"sb": "********"');
    expect(log).toContain('"stdout_lines": ["********", "********", "********", "short", "********"]');
    const repr = events.filter((e) => e.kind === 'runner_on_ok').map((e) => (e.data.res as { msg?: unknown }).msg)[4];
    expect(repr).toBe("['********', '********', '********']");
    // Every form of every secret contains one of these fragments.
    const leaks = stringsOf(events).filter((s) =>
      ['word-x9', 'c-z5', 'line-aaaa', 'line-bbbb'].some((f) => s.includes(f)),
    );
    expect(leaks).toEqual([]);
  });
});

describe('the callback pipe', () => {
  it("takes no status, log or ill-typed fields from a project's plugin writing to fd 3", async () => {
    const repo = createRepo(tempDir('baton-forge-repo'));
    fs.mkdirSync(path.join(repo.dir, 'filter_plugins'));
    const forged = [
      { event: 'status', status: 'finished', conclusion: 'succeeded', exit_code: 0, stats: {} },
      { event: 'log', text: 'forged log line\n', start_line: 1, end_line: 2 },
      {
        event: 'runner_on_ok',
        host: 'forged-host',
        task: { not: 'a string' },
        counter: -1,
        end_line: 'x',
        duration: 'slow',
        extra: 'dropped',
        res: { forged: 'n\u0000ul' },
      },
    ];
    fs.writeFileSync(
      path.join(repo.dir, 'filter_plugins', 'forge.py'),
      [
        'import json, os',
        `LINES = ${JSON.stringify(forged.map((f) => JSON.stringify(f)))}`,
        'def forge(value):',
        '    for line in LINES:',
        "        os.write(3, (line + '\\n').encode())",
        '    return value',
        'class FilterModule:',
        '    def filters(self):',
        "        return {'forge': forge}",
        '',
      ].join('\n'),
    );
    fs.writeFileSync(
      path.join(repo.dir, 'site.yml'),
      play(`    - debug: msg="{{ 'x' | forge }}"\n    - command: /bin/false\n`),
    );
    repo.git('add', '.');
    repo.git('commit', '-q', '-m', 'a plugin that forges events');
    try {
      const bundle: RunBundle = {
        ...inlineBundle(''),
        playbook: { source: 'project', path: 'site.yml', git: { url: repo.url, commit: repo.head() } },
      };
      const { outcome, events, log } = await run(bundle);
      expect(outcome).toMatchObject({ conclusion: 'failed', exitCode: 2 });
      const statuses = events.filter((e) => e.kind === 'status');
      expect(statuses.map((e) => e.data.status)).toEqual(['running', 'finished']);
      expect(statuses.at(-1)!.data.conclusion).toBe('failed');
      expect(log).not.toContain('forged log line');
      const forgedOk = events.filter((e) => e.kind === 'runner_on_ok' && e.data.host === 'forged-host');
      expect(forgedOk.length).toBeGreaterThan(0);
      for (const e of forgedOk) expect(e.data).toEqual({ host: 'forged-host', res: { forged: 'nul' } });
    } finally {
      fs.rmSync(path.dirname(repo.dir), { recursive: true, force: true });
    }
  });
});

describe('a run stopped for shutdown', () => {
  const sleeper = () => inlineBundle(play(`    - command: sh -c 'sleep 30; :' baton-shutdown-${process.pid}\n`));
  const abortAtTaskStart = (controller: AbortController, reason: unknown): Partial<RunPlaybookOptions> => ({
    signal: controller.signal,
    interruptGraceMs: 2_000,
    terminateGraceMs: 1_000,
    onEvent: (e) => {
      if (e.kind === 'playbook_on_task_start') setTimeout(() => controller.abort(reason), 200);
    },
  });

  it('ends canceled with reason shutdown when aborted with ShutdownAbort, canceled / canceled otherwise', async () => {
    const shutdown = new AbortController();
    const stopped = await run(sleeper(), abortAtTaskStart(shutdown, new ShutdownAbort()));
    expect(stopped.outcome).toMatchObject({ conclusion: 'canceled', reason: 'shutdown' });
    expect(stopped.events.at(-1)!.data).toMatchObject({
      status: 'finished',
      conclusion: 'canceled',
      reason: 'shutdown',
    });
    expect(stopped.log).toContain('baton: the run was stopped: the server is shutting down\n');
    expect(stopped.log).not.toContain('baton: the run was canceled');

    const user = new AbortController();
    const canceled = await run(sleeper(), abortAtTaskStart(user, new Error('canceled by a user')));
    expect(canceled.outcome).toMatchObject({ conclusion: 'canceled', reason: 'canceled' });
    expect(canceled.log).toContain('baton: the run was canceled\n');
  });

  it('ends canceled / shutdown when aborted before ansible started, also with a ShutdownAbort of another realm', async () => {
    const foreign = Object.assign(new Error('the server is shutting down'), { name: 'ShutdownAbort' });
    for (const reason of [new ShutdownAbort(), foreign]) {
      const { outcome, events } = await run(sleeper(), { signal: AbortSignal.abort(reason) });
      expect(outcome).toMatchObject({ conclusion: 'canceled', reason: 'shutdown', exitCode: null });
      expect(events.some((e) => e.kind === 'playbook_on_start')).toBe(false);
    }
  });
});
