import { type ChildProcess, spawn } from 'node:child_process';
import { type Sandbox, sandboxed } from '../sandbox/sandbox.js';

/** The sandbox of one capped run: what it hides, and what it may write (`cwd` when not given) or must read. */
export interface CappedRunSandbox extends Sandbox {
  writable?: string[] | undefined;
  readable?: string[] | undefined;
}

export interface CappedRunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  maxOutputBytes: number;
  /** written to the child's stdin, which is then closed (a secret goes here, never into argv) */
  stdin?: string | undefined;
  /** run the command in the bubblewrap sandbox (off by default) */
  sandbox?: CappedRunSandbox | undefined;
}

export interface CappedRunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** why the process was killed, when it was */
  killedFor?: 'timeout' | 'output-too-large' | undefined;
}

/** stderr only ever feeds an error message: this much of it is plenty. */
const MAX_STDERR_BYTES = 64 * 1024;

/** Kills a child's whole process group (git starts ssh, sources start helpers…); one already gone is fine. */
export function killProcessGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
}

/**
 * Runs a command in its own process group and kills the whole group (children included) when it runs past
 * `timeoutMs` or writes more than `maxOutputBytes` to stdout, so a hostile or broken inventory source
 * cannot hang a request or fill memory.
 */
export function runCapped(command: string, args: string[], opts: CappedRunOptions): Promise<CappedRunResult> {
  return new Promise((resolve, reject) => {
    const sb = opts.sandbox;
    const run = sb
      ? sandboxed(command, args, {
          mode: sb.mode,
          hidden: sb.hidden,
          writable: sb.writable ?? [opts.cwd],
          readable: sb.readable,
        })
      : { command, args };
    const child = spawn(run.command, run.args, {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (opts.stdin !== undefined) {
      child.stdin!.on('error', () => undefined); // a child that exits before reading stdin is judged by its exit code
      child.stdin!.end(opts.stdin);
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let killedFor: CappedRunResult['killedFor'];

    const killGroup = (reason: NonNullable<CappedRunResult['killedFor']>) => {
      if (killedFor) return;
      killedFor = reason;
      killProcessGroup(child);
    };
    const timer = setTimeout(() => killGroup('timeout'), opts.timeoutMs);

    child.stdout!.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > opts.maxOutputBytes) killGroup('output-too-large');
      else out.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (errBytes < MAX_STDERR_BYTES) err.push(chunk.subarray(0, MAX_STDERR_BYTES - errBytes));
      errBytes += chunk.length;
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({
        exitCode,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        killedFor,
      });
    });
  });
}
