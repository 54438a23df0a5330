// The callback plugin's bytecode beside it (run by scripts/bundle.mjs at build time): ansible imports the plugin on
// every run, inside a sandbox whose read-only root keeps Python from caching what it compiled, so each run would
// compile it again (~2 ms, bench/overhead). Checked by the source's hash, not its time, so a copy that does not keep
// file times leaves it valid. Compiled by the interpreter ansible-playbook runs on (its #! line), else python3; a
// failure only warns. `node scripts/callback-bytecode.mjs --python` prints that interpreter (for its test).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CALLBACK_PLUGIN_DIR = path.join(root, 'packages', 'executor', 'callback');

/** The interpreter named by ansible-playbook's #! line (directly or through env), else python3. */
export function ansiblePython() {
  try {
    const found = spawnSync('sh', ['-c', 'command -v ansible-playbook'], { encoding: 'utf8' }).stdout?.trim();
    if (!found) return 'python3';
    const words = /^#!(.*)/.exec(readFileSync(found, 'utf8').split('\n', 1)[0])?.[1]?.trim().split(/\s+/) ?? [];
    // `#!/usr/bin/env [-S] [NAME=value…] python3 …`: the first word that is neither an option nor an assignment
    const program =
      path.basename(words[0] ?? '') === 'env'
        ? words.slice(1).find((w) => !w.startsWith('-') && !w.includes('='))
        : words[0];
    return program && path.basename(program).startsWith('python') ? program : 'python3';
  } catch {
    return 'python3';
  }
}

export function compileCallbackPlugin() {
  const python = ansiblePython();
  const args = ['-m', 'compileall', '-q', '-l', '--invalidation-mode', 'checked-hash', CALLBACK_PLUGIN_DIR];
  const compiled = spawnSync(python, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (compiled.status !== 0) {
    console.warn(
      `bundle: the callback plugin was not precompiled with ${python}: ${compiled.error?.message ?? compiled.stderr}`,
    );
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--python'))
  console.log(ansiblePython());
