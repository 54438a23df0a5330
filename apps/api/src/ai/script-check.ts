/**
 * Checks a script the AI drafted, without running it: the warnings shown beside the draft. Each language's own parser
 * (bash -n, Python's compile(), gofmt -e, PowerShell's Parser) reads the script; none of them executes it. The script
 * never goes on a command line (where `ps` would show it and a shell might expand it): it is given on stdin or
 * written to a file in a fresh private directory that is removed afterwards. A tool that is missing, crashes or hangs
 * is a warning, never an error: the draft is advice, and a check that cannot run must not lose it.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export type ScriptLanguage = 'bash' | 'python' | 'powershell' | 'go';

export interface ScriptCheckOptions {
  /** Where the tools are looked up; default the server's PATH */
  path?: string | undefined;
  /** How long one tool may take; default 10 s */
  timeoutMs?: number;
  /** Where the private directories for scripts read from a file are made; default the system's temp directory */
  tempRoot?: string;
}

const MAX_WARNINGS = 20;
const MAX_WARNING_CHARS = 500;
/** A tool's output read at most: enough for far more than MAX_WARNINGS lines, bounded against a runaway tool. */
const MAX_OUTPUT_CHARS = 256 * 1024;

/** Checks `script` as `language`; resolves to its warnings (empty when every check passed), never rejects. */
export function checkScript(language: ScriptLanguage, script: string): Promise<string[]> {
  return createScriptChecker()(language, script);
}

export function createScriptChecker(options: ScriptCheckOptions = {}) {
  const run = toolRunner(options);
  return async (language: ScriptLanguage, script: string): Promise<string[]> => {
    try {
      const warnings = await CHECKS[language](script, run);
      return bounded(warnings);
    } catch (err) {
      return [`the ${language} check failed: ${err instanceof Error ? err.message : String(err)}`];
    }
  };
}

type RunTool = (command: string, args: string[], input: ToolInput) => Promise<ToolResult>;
/** What the tool reads: the script on stdin, or a file named `script` in a private directory (its cwd). */
type ToolInput = { stdin: string } | { file: string; env?: Record<string, string> };
type ToolResult =
  | { kind: 'missing' }
  | { kind: 'failed'; reason: string }
  | { kind: 'done'; code: number; stdout: string; stderr: string };

const CHECKS: Record<ScriptLanguage, (script: string, run: RunTool) => Promise<string[]>> = {
  async bash(script, run) {
    const syntax = await run('bash', ['--norc', '--noprofile', '-n', 'script'], { file: script });
    const warnings = toolWarnings('bash -n', syntax, (out) => lines(out.stderr));
    // --shell: the draft is bash whatever its first line says; -f gcc: one finding a line, "script:3:5: note: …".
    const lint = await run('shellcheck', ['--shell=bash', '-f', 'gcc', 'script'], { file: script });
    if (lint.kind === 'missing') return ['shellcheck is not installed: only bash -n checked the script', ...warnings];
    // shellcheck exits 1 when it has findings: only other codes (and no findings) mean it did not check.
    return [...warnings, ...toolWarnings('shellcheck', lint, (out) => lines(out.stdout), [0, 1])];
  },

  async python(script, run) {
    // -I: no PYTHON* variables, no user site; compile() parses to bytecode and runs nothing. Bytes, so a coding
    // declaration is honoured whatever the server's locale.
    const program = [
      'import sys',
      'try:',
      "    compile(sys.stdin.buffer.read(), 'script.py', 'exec')",
      'except SyntaxError as e:',
      "    print(f'script.py, line {e.lineno}: {e.msg}' + (f': {e.text.strip()}' if e.text else ''))",
      '    sys.exit(1)',
      'except (ValueError, RecursionError, MemoryError) as e:',
      "    print(f'script.py: {type(e).__name__}: {e}')",
      '    sys.exit(1)',
    ].join('\n');
    const result = await run('python3', ['-I', '-c', program], { stdin: script });
    if (result.kind === 'missing') return ['Python is not installed: the script was not parsed'];
    return toolWarnings('python', result, (out) => lines(out.stdout + out.stderr));
  },

  async go(script, run) {
    // gofmt -e parses (a whole file, or declarations or statements) and reports every syntax error; its formatted
    // output is not wanted.
    const result = await run('gofmt', ['-e'], { stdin: script });
    if (result.kind === 'missing') return ['Go is not installed: the script was not parsed'];
    return toolWarnings('gofmt', result, (out) => lines(out.stderr.replaceAll('<standard input>', 'script.go')));
  },

  async powershell(script, run) {
    // ParseInput only builds the syntax tree; nothing is invoked. The file's path comes in an environment variable,
    // so the command line is this fixed program.
    const program = [
      '$tokens = $null; $errors = $null',
      '$source = [System.IO.File]::ReadAllText($env:BATON_SCRIPT_FILE)',
      '[void][System.Management.Automation.Language.Parser]::ParseInput($source, [ref]$tokens, [ref]$errors)',
      'foreach ($e in $errors) { "script.ps1:{0}:{1}: {2}" -f $e.Extent.StartLineNumber, $e.Extent.StartColumnNumber, $e.Message }',
    ].join('\n');
    const result = await run('pwsh', ['-NoLogo', '-NoProfile', '-NonInteractive', '-Command', program], {
      file: script,
      env: { BATON_SCRIPT_FILE: 'script' },
    });
    if (result.kind === 'missing')
      return [
        'PowerShell is not installed: only brackets, quotes and here-strings were checked',
        ...powershellShapeWarnings(script),
      ];
    return toolWarnings('pwsh', result, (out) => lines(out.stdout));
  },
};

/** The findings of a tool that ran, or one warning saying why it could not check. */
function toolWarnings(
  tool: string,
  result: ToolResult,
  findings: (out: { stdout: string; stderr: string }) => string[],
  okCodes = [0],
): string[] {
  if (result.kind === 'missing') return [`${tool} is not installed: the script was not checked with it`];
  if (result.kind === 'failed') return [`${tool} could not check the script: ${result.reason}`];
  const found = findings(result).map((line) => `${tool}: ${line}`);
  if (okCodes.includes(result.code)) return found;
  if (found.length > 0) return found;
  return [`${tool} could not check the script: it exited with ${result.code}${firstLine(result.stderr)}`];
}

const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');

const firstLine = (text: string): string => {
  const line = lines(text)[0];
  return line ? `: ${line}` : '';
};

/** At most MAX_WARNINGS, each at most MAX_WARNING_CHARS; the last says how many more there were. */
function bounded(warnings: string[]): string[] {
  const clip = (w: string) => (w.length > MAX_WARNING_CHARS ? `${w.slice(0, MAX_WARNING_CHARS - 1)}…` : w);
  if (warnings.length <= MAX_WARNINGS) return warnings.map(clip);
  const rest = warnings.length - (MAX_WARNINGS - 1);
  return [...warnings.slice(0, MAX_WARNINGS - 1).map(clip), `… and ${rest} more warnings`];
}

function toolRunner(options: ScriptCheckOptions): RunTool {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return async (command, args, input) => {
    const dir =
      'file' in input ? await fs.mkdtemp(path.join(options.tempRoot ?? os.tmpdir(), 'baton-script-check-')) : undefined;
    try {
      if (dir && 'file' in input) {
        // mkdtemp makes the directory 0700; the file is the owner's alone too.
        await fs.writeFile(path.join(dir, 'script'), input.file, { mode: 0o600 });
      }
      const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: 'C.UTF-8', ...('env' in input ? input.env : {}) };
      if (options.path !== undefined) env.PATH = options.path;
      // Nothing bash would source before reading the script.
      delete env.BASH_ENV;
      delete env.ENV;
      return await runOnce(
        command,
        args,
        { cwd: dir ?? os.tmpdir(), env, timeoutMs },
        'stdin' in input ? input.stdin : '',
      );
    } finally {
      if (dir) await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
  };
}

function runOnce(
  command: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
  stdin: string,
): Promise<ToolResult> {
  return new Promise((resolve) => {
    // Its own process group, so a timeout also ends whatever the tool started (a pyenv shim's python).
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: 'pipe', detached: true });
    const out = { stdout: '', stderr: '' };
    let timedOut = false;
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, opts.timeoutMs);
    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream].setEncoding('utf8');
      child[stream].on('data', (chunk: string) => {
        if (out[stream].length < MAX_OUTPUT_CHARS) out[stream] += chunk.slice(0, MAX_OUTPUT_CHARS - out[stream].length);
      });
    }
    // A tool that exits without reading all of stdin closes the pipe: that is its answer, not an error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(err.code === 'ENOENT' ? { kind: 'missing' } : { kind: 'failed', reason: err.message });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) resolve({ kind: 'failed', reason: `it did not finish within ${opts.timeoutMs / 1000} s` });
      else if (code === null) resolve({ kind: 'failed', reason: `it was ended by ${signal ?? 'a signal'}` });
      else resolve({ kind: 'done', code, ...out });
    });
  });
}

/**
 * Without PowerShell, the shape a parser would check first: (), {} and [] balanced outside strings and comments,
 * every quote and here-string closed. A best effort: it does not read `$( … )` inside double quotes as code.
 */
export function powershellShapeWarnings(script: string): string[] {
  const warnings: string[] = [];
  const open: Array<{ char: string; line: number; column: number }> = [];
  const pairs: Record<string, string> = { ')': '(', '}': '{', ']': '[' };
  const text = script.replace(/\r\n?/g, '\n');
  let line = 1;
  let lineStart = 0;
  let i = 0;
  const at = (index: number) => `script.ps1:${line}:${index - lineStart + 1}`;
  const newlinesIn = (from: number, to: number) => {
    for (let k = from; k < to; k++)
      if (text[k] === '\n') {
        line++;
        lineStart = k + 1;
      }
  };
  /** Skips to just past `end` (searched from `from`), counting lines; false when it never comes. */
  const skipTo = (from: number, end: RegExp): boolean => {
    end.lastIndex = from;
    const m = end.exec(text);
    const stop = m ? m.index + m[0].length : text.length;
    newlinesIn(i, stop);
    i = stop;
    return m !== null;
  };

  while (i < text.length) {
    const c = text[i]!;
    const start = at(i);
    if (c === '\n') {
      line++;
      lineStart = ++i;
    } else if (c === '`') {
      i += 2; // an escaped character, or a line continuation
      if (text[i - 1] === '\n') {
        line++;
        lineStart = i;
      }
    } else if (c === '<' && text[i + 1] === '#') {
      if (!skipTo(i + 2, /#>/g)) warnings.push(`${start}: the block comment <# is never closed with #>`);
    } else if (c === '#' && (i === 0 || /[\s;(){}|&]/.test(text[i - 1]!))) {
      skipTo(i, /(?=\n)/g);
    } else if (
      c === '@' &&
      (text[i + 1] === '"' || text[i + 1] === "'") &&
      /^[ \t]*\n/.test(text.slice(i + 2, i + 200))
    ) {
      const q = text[i + 1]!;
      if (!skipTo(i + 2, new RegExp(`\\n${q}@`, 'g')))
        warnings.push(`${start}: the here-string @${q} is never closed with ${q}@ at the start of a line`);
    } else if (c === "'" || c === '"') {
      const end = stringEnd(text, i, c);
      if (end < 0) warnings.push(`${start}: the string opened with ${c} is never closed`);
      const stop = end < 0 ? text.length : end;
      newlinesIn(i, stop);
      i = stop;
    } else if (c === '(' || c === '{' || c === '[') {
      open.push({ char: c, line, column: i - lineStart + 1 });
      i++;
    } else if (c === ')' || c === '}' || c === ']') {
      const top = open[open.length - 1];
      if (top?.char === pairs[c]) open.pop();
      else
        warnings.push(
          top
            ? `${start}: '${c}' does not close the '${top.char}' opened at line ${top.line}`
            : `${start}: '${c}' closes nothing`,
        );
      i++;
    } else {
      i++;
    }
  }
  for (const o of open) warnings.push(`script.ps1:${o.line}:${o.column}: '${o.char}' is never closed`);
  return warnings;
}

/**
 * Just past the quote that closes the string opened at `from`, or -1. A doubled quote is a quote in both kinds; in
 * double quotes a backtick escapes the next character too.
 */
function stringEnd(text: string, from: number, quote: string): number {
  let j = from + 1;
  while (j < text.length) {
    const c = text[j];
    if (quote === '"' && c === '`') j += 2;
    else if (c === quote && text[j + 1] === quote) j += 2;
    else if (c === quote) return j + 1;
    else j++;
  }
  return -1;
}
