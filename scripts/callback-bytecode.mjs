// The callback plugin's bytecode beside it (run by scripts/bundle.mjs at build time): ansible imports the plugin on
// every run, inside a sandbox whose read-only root keeps Python from caching what it compiled, so each run would
// compile it again (~2 ms, bench/overhead). Checked by the source's hash, not its time, so a copy that does not keep
// file times leaves it valid. Compiled by the interpreter ansible-playbook runs on (its #! line), else python3; a
// failure only warns. `node scripts/callback-bytecode.mjs --python` prints that interpreter (for its test).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CALLBACK_PLUGIN_DIR = path.join(root, 'packages', 'executor', 'callback');

/**
 * The interpreter named by ansible-playbook's #! line (directly or through env), else python3. The executor's own
 * reading of it (packages/executor/src/playbook/ansible-python.ts), compiled by `tsc -b` before this runs.
 */
export async function ansiblePythonInterpreter() {
  const module = path.join(root, 'packages', 'executor', 'dist', 'playbook', 'ansible-python.js');
  const { ansiblePython } = await import(pathToFileURL(module).href);
  return ansiblePython(process.env.PATH ?? '')?.interpreter ?? 'python3';
}

export async function compileCallbackPlugin() {
  const python = await ansiblePythonInterpreter();
  const args = ['-m', 'compileall', '-q', '-l', '--invalidation-mode', 'checked-hash', CALLBACK_PLUGIN_DIR];
  const compiled = spawnSync(python, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (compiled.status !== 0) {
    console.warn(
      `bundle: the callback plugin was not precompiled with ${python}: ${compiled.error?.message ?? compiled.stderr}`,
    );
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--python'))
  console.log(await ansiblePythonInterpreter());
