import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { checkScript, createScriptChecker, powershellShapeWarnings, type ScriptLanguage } from './script-check.js';

const onPath = (tool: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const has = { shellcheck: onPath('shellcheck'), gofmt: onPath('gofmt'), pwsh: onPath('pwsh') };
const withTool = (tool: keyof typeof has) => (has[tool] ? it : it.skip);
const withoutTool = (tool: keyof typeof has) => (has[tool] ? it.skip : it);

let scratch: string;
beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-script-check-test-'));
});
afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe('checkScript', () => {
  it('passes a good bash script (only the note that shellcheck is missing, when it is)', async () => {
    const warnings = await checkScript(
      'bash',
      '#!/usr/bin/env bash\nset -euo pipefail\nfor f in "$@"; do\n  echo "$f"\ndone\n',
    );
    expect(warnings).toEqual(has.shellcheck ? [] : ['shellcheck is not installed: only bash -n checked the script']);
  });

  it('reports bash syntax errors with bash’s message, naming the file `script`', async () => {
    const warnings = await checkScript('bash', 'if true; then\n  echo hi\nfi fi\n');
    const syntax = warnings.filter((w) => w.startsWith('bash -n: '));
    expect(syntax.length).toBeGreaterThan(0);
    expect(syntax[0]).toMatch(/^bash -n: script: line 3: syntax error/);
    expect(warnings.join('\n')).not.toContain(os.tmpdir());
  });

  withTool('shellcheck')('reports shellcheck’s findings', async () => {
    const warnings = await checkScript('bash', '#!/bin/bash\nrm -rf $1/data\n');
    expect(warnings).toEqual([expect.stringMatching(/^shellcheck: script:2:8: note: .*\[SC2086\]$/)]);
  });

  withoutTool('shellcheck')('says shellcheck is not installed', async () => {
    expect(await checkScript('bash', 'rm -rf $1/data\n')).toEqual([
      'shellcheck is not installed: only bash -n checked the script',
    ]);
  });

  it('passes a good Python script and reports a broken one', async () => {
    expect(await checkScript('python', 'import sys\n\ndef main():\n    print(sys.argv)\n\nmain()\n')).toEqual([]);
    expect(await checkScript('python', 'def main(:\n    pass\n')).toEqual([
      expect.stringMatching(/^python: script\.py, line 1: .*def main\(:/),
    ]);
    // Text that is not UTF-8 under a coding declaration is read as declared.
    expect(await checkScript('python', '# -*- coding: latin-1 -*-\nname = "café"\n')).toEqual([]);
  });

  withTool('gofmt')('passes a good Go program and reports a broken one', async () => {
    expect(await checkScript('go', 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}\n')).toEqual(
      [],
    );
    const warnings = await checkScript('go', 'package main\n\nfunc main() {\n\tfmt.Println("hi"\n}\n');
    expect(warnings[0]).toMatch(/^gofmt: script\.go:4:/);
  });

  withoutTool('gofmt')('says Go is not installed, for a good and a broken program alike', async () => {
    for (const script of ['package main\n\nfunc main() {}\n', 'package main\n\nfunc main( {\n'])
      expect(await checkScript('go', script)).toEqual(['Go is not installed: the script was not parsed']);
  });

  withTool('pwsh')('passes a good PowerShell script and reports a broken one', async () => {
    expect(await checkScript('powershell', 'param([string]$Name)\nWrite-Output "hi $Name"\n')).toEqual([]);
    const warnings = await checkScript('powershell', 'if ($true) {\n  Write-Output "hi"\n');
    expect(warnings[0]).toMatch(/^pwsh: script\.ps1:1:/);
  });

  withoutTool('pwsh')('checks PowerShell’s brackets and quotes itself when PowerShell is not installed', async () => {
    const note = 'PowerShell is not installed: only brackets, quotes and here-strings were checked';
    const good = [
      'param([string]$Name = "world")',
      '# a comment with ( and "',
      '<# a block comment with { #>',
      '$text = @"',
      'Hello ) $Name "quoted" {',
      '"@',
      "$single = 'it''s ) fine'",
      '$double = "say `"hi`" ("',
      'if ($Name -ne "") { Write-Output "$Name#1" } else { $list = @(1, 2)[0] }',
    ].join('\n');
    expect(await checkScript('powershell', good)).toEqual([note]);
    expect(await checkScript('powershell', 'if ($true) {\n  Write-Output ("hi"]\n')).toEqual([
      note,
      "script.ps1:2:21: ']' does not close the '(' opened at line 2",
      "script.ps1:1:12: '{' is never closed",
      "script.ps1:2:16: '(' is never closed",
    ]);
  });

  it('finds unclosed strings, here-strings and comments in PowerShell', () => {
    expect(powershellShapeWarnings('Write-Output "hi\n')).toEqual([
      'script.ps1:1:14: the string opened with " is never closed',
    ]);
    expect(powershellShapeWarnings("$a = 'it''s\n")).toEqual([
      "script.ps1:1:6: the string opened with ' is never closed",
    ]);
    expect(powershellShapeWarnings('$t = @"\nbody\n  "@\n')).toEqual([
      'script.ps1:1:6: the here-string @" is never closed with "@ at the start of a line',
    ]);
    expect(powershellShapeWarnings('<# never\nclosed')).toEqual([
      'script.ps1:1:1: the block comment <# is never closed with #>',
    ]);
    expect(powershellShapeWarnings('}\n')).toEqual(["script.ps1:1:1: '}' closes nothing"]);
  });

  it('never runs the script: a marker the script would create does not appear', async () => {
    const marker = (language: string) => path.join(scratch, `ran-${language}`);
    const scripts: Record<ScriptLanguage, string> = {
      bash: `#!/bin/bash\ntouch '${marker('bash')}'\n: "$(touch '${marker('bash')}')"\n`,
      python: `open(${JSON.stringify(marker('python'))}, 'w').write('ran')\n`,
      go: `package main\n\nimport "os"\n\nfunc main() { os.WriteFile(${JSON.stringify(marker('go'))}, nil, 0o600) }\n`,
      powershell: `New-Item -ItemType File -Path '${marker('powershell')}'\n`,
    };
    const tempRoot = fs.mkdtempSync(path.join(scratch, 'temp-'));
    const check = createScriptChecker({ tempRoot });
    for (const [language, script] of Object.entries(scripts) as Array<[ScriptLanguage, string]>) {
      const warnings = await check(language, script);
      expect([language, warnings.filter((w) => !/not installed/.test(w))]).toEqual([language, []]);
      expect([language, fs.existsSync(marker(language))]).toEqual([language, false]);
    }
    // The copies checked from a file (bash; PowerShell with pwsh) were made in private directories, now gone.
    expect(fs.readdirSync(tempRoot)).toEqual([]);
  });

  it('bounds its answer: at most 20 warnings of at most 500 characters', async () => {
    const manyBash = Array.from({ length: 1000 }, (_, i) => `echo $v${i}`).join('\n');
    const manyPs = Array.from({ length: 1000 }, () => ')').join('\n');
    const longLine = `echo ${'x'.repeat(2000)} )\n`;
    for (const [language, script] of [
      ['bash', manyBash],
      ['powershell', manyPs],
      ['bash', longLine],
      ['python', `x = (${'1 +'.repeat(1000)}\n`],
    ] as Array<[ScriptLanguage, string]>) {
      const warnings = await checkScript(language, script);
      expect(warnings.length).toBeGreaterThan(0);
      expect(warnings.length).toBeLessThanOrEqual(20);
      for (const w of warnings) expect(w.length).toBeLessThanOrEqual(500);
    }
    const ps = await checkScript('powershell', manyPs);
    expect(ps).toHaveLength(20);
    expect(ps[19]).toBe('… and 982 more warnings');
    const long = await checkScript('bash', longLine);
    expect(long.some((w) => w.length === 500 && w.endsWith('…'))).toBe(true);
  });

  it('answers a warning, never an error, when the tools are missing', async () => {
    const empty = fs.mkdtempSync(path.join(scratch, 'empty-path-'));
    const check = createScriptChecker({ path: empty });
    expect(await check('bash', 'echo hi\n')).toEqual([
      'shellcheck is not installed: only bash -n checked the script',
      'bash -n is not installed: the script was not checked with it',
    ]);
    expect(await check('python', 'print(1)\n')).toEqual(['Python is not installed: the script was not parsed']);
    expect(await check('go', 'package main\n')).toEqual(['Go is not installed: the script was not parsed']);
    expect((await check('powershell', '{\n'))[0]).toBe(
      'PowerShell is not installed: only brackets, quotes and here-strings were checked',
    );
  });

  it('hands a tool the script in a private directory, never on its command line', async () => {
    const tools = fs.mkdtempSync(path.join(scratch, 'tools-'));
    // Stands in for shellcheck to show what it was given: its arguments, and the modes of its directory and file.
    fs.writeFileSync(
      path.join(tools, 'shellcheck'),
      '#!/bin/sh\necho "args: $*"\necho "modes: $(/usr/bin/stat -c %a .) $(/usr/bin/stat -c %a script)"\n',
      { mode: 0o755 },
    );
    const bash = path.dirname(execFileSync('sh', ['-c', 'command -v bash'], { encoding: 'utf8' }).trim());
    const check = createScriptChecker({ path: `${tools}:${bash}` });
    expect(await check('bash', 'echo "a secret-looking line"\n')).toEqual([
      'shellcheck: args: --shell=bash -f gcc script',
      'shellcheck: modes: 700 600',
    ]);
  });

  it('answers a warning when a tool hangs or crashes', async () => {
    const tools = fs.mkdtempSync(path.join(scratch, 'tools-'));
    const tool = (name: string, body: string) =>
      fs.writeFileSync(path.join(tools, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    tool('bash', 'exec /bin/sleep 30');
    tool('shellcheck', 'kill -SEGV $$');
    tool('python3', 'echo "Fatal Python error: something broke" >&2; exit 134');
    const check = createScriptChecker({ path: tools, timeoutMs: 300 });
    expect(await check('bash', 'echo hi\n')).toEqual([
      'bash -n could not check the script: it did not finish within 0.3 s',
      'shellcheck could not check the script: it was ended by SIGSEGV',
    ]);
    expect(await check('python', 'print(1)\n')).toEqual(['python: Fatal Python error: something broke']);
  });
});
