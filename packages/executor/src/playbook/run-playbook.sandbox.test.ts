// What a playbook can reach with and without the bubblewrap sandbox. The behaviours every run must keep inside
// it (ssh to loopback with the run's agent, FIFOs, cancel) are run in both modes by run-playbook.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import type { RunBundle, RunEvent } from '@baton/contracts';
import { probeBwrap, type SandboxMode } from '../sandbox/sandbox.js';
import { tempDir } from '../testing/index.js';
import { runPlaybook } from './run-playbook.js';

const workRoot = tempDir('baton-playbook-sandbox');
// Outside the system temp directory, which the sandbox hides anyway: here only `hidden` keeps it out.
const dataDir = fs.mkdtempSync('/var/tmp/baton-sandbox-data-');
const SECRET = `db-canary-${process.pid}`;

beforeAll(async () => {
  fs.writeFileSync(path.join(dataDir, 'baton.db'), SECRET);
  expect(await probeBwrap()).toEqual({ available: true });
});
afterAll(() => {
  for (const d of [workRoot, dataDir]) fs.rmSync(d, { recursive: true, force: true });
});

async function probe(mode: SandboxMode, script: string) {
  const events: RunEvent[] = [];
  const content = `- hosts: all\n  gather_facts: false\n  tasks:\n    - shell: |\n${script.replace(/^/gm, '        ')}\n`;
  const bundle: RunBundle = {
    run_id: 'run_sandbox',
    playbook: { source: 'inline', content },
    inventory: { content: 'localhost ansible_connection=local\n', format: 'ini' },
    check: false,
    credentials: [],
  };
  // A second run directory beside this one, as a concurrent run would have.
  const neighbour = fs.mkdtempSync(path.join(workRoot, 'baton-run-'));
  try {
    const outcome = await runPlaybook(bundle, {
      workRoot,
      sandbox: { mode, hidden: [dataDir] },
      onEvent: (e) => events.push(e),
    });
    const result = events.find((e) => e.kind === 'runner_on_ok' || e.kind === 'runner_on_failed');
    return { outcome, stdout: (result?.data.res as { stdout?: string } | undefined)?.stdout ?? '' };
  } finally {
    fs.rmSync(neighbour, { recursive: true });
  }
}

const READ_PROBE = [
  `cat ${dataDir}/baton.db 2>&1 || true`,
  `echo "processes: $(ls /proc | grep -cE '^[0-9]+$')"`,
  // This test process stands for the API: its environment would hold BATON_MASTER_KEY.
  `tr '\\0' '\\n' < /proc/${process.pid}/environ 2>&1 | grep -c '^PATH=' || echo no-parent-environ`,
  `echo "run dirs: $(ls "$TMPDIR/../.." | grep -c baton-run-)"`,
].join('\n');

describe('a playbook in the sandbox', () => {
  it('without the sandbox reads the data directory, the parent process environment and other run directories', async () => {
    const { outcome, stdout } = await probe('off', READ_PROBE);
    expect(outcome.conclusion).toBe('succeeded');
    expect(stdout).toContain(SECRET);
    expect(stdout).toMatch(/^1$/m);
    expect(stdout).not.toContain('no-parent-environ');
    expect(stdout).toContain('run dirs: 2');
  });

  it('in bwrap cannot read a hidden directory, sees only its own processes, and no other run directory', async () => {
    const { outcome, stdout } = await probe('bwrap', READ_PROBE);
    expect(outcome.conclusion).toBe('succeeded');
    expect(stdout).not.toContain(SECRET);
    expect(stdout).toContain(`${dataDir}/baton.db: No such file`);
    const processes = Number(/processes: (\d+)/.exec(stdout)![1]);
    expect(processes).toBeGreaterThan(0);
    expect(processes).toBeLessThan(20); // bwrap, ansible and its worker, the module, this shell: not the host's
    expect(stdout).toMatch(/^0\nno-parent-environ$/m);
    expect(stdout).toContain('run dirs: 1');
  });

  it('in bwrap writes its run directory and /tmp, but nothing else of the host', async () => {
    const script = [
      'echo run > "$TMPDIR/written" && cat "$TMPDIR/written"',
      'echo tmp > /tmp/written && cat /tmp/written',
      'touch /etc/baton-sandbox-probe 2>&1 || true',
      `touch ${dataDir}/planted 2>&1 || true`,
      // what the next start-up kills if this server dies: never the playbook's to choose
      '{ echo \'{"server_pid": 1, "ansible_pgid": 1}\' > "$TMPDIR/../pids.json"; } 2>&1 || true',
    ].join('\n');
    const { outcome, stdout } = await probe('bwrap', script);
    expect(outcome.conclusion).toBe('succeeded');
    expect(stdout).toMatch(/^run\ntmp\n/);
    expect(stdout).toContain("'/etc/baton-sandbox-probe': Read-only file system");
    expect(stdout).toMatch(/pids\.json: Read-only file system/);
    expect(fs.existsSync('/etc/baton-sandbox-probe')).toBe(false);
    expect(fs.existsSync(path.join(dataDir, 'planted'))).toBe(false); // written into the tmpfs over it, if at all
  });
});
