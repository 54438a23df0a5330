// The build precompiles the callback plugin (scripts/bundle.mjs): ansible imports it on every run inside a sandbox whose
// read-only root keeps Python from caching the compiled plugin itself. The bytecode must be there for the interpreter
// ansible-playbook runs on, and valid for the plugin's current text by hash (a copy without file times keeps it).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PLUGIN_DIR = path.join(ROOT, 'packages/executor/callback');
const SOURCE = path.join(PLUGIN_DIR, 'baton_events.py');

/** The interpreter the build compiles with (scripts/callback-bytecode.mjs: ansible-playbook's, else python3). */
const ansiblePython = () =>
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/callback-bytecode.mjs'), '--python'], {
    encoding: 'utf8',
  }).trim();

const python = (code: string, ...args: string[]) =>
  execFileSync(ansiblePython(), ['-c', code, ...args], { encoding: 'utf8' }).trim();

describe('the callback plugin bytecode', () => {
  it("is built for ansible's interpreter, checked by the hash of the plugin as it is now", () => {
    const compiled = python('import importlib.util, sys; print(importlib.util.cache_from_source(sys.argv[1]))', SOURCE);
    expect(path.dirname(compiled)).toBe(path.join(PLUGIN_DIR, '__pycache__'));
    const pyc = fs.readFileSync(compiled);
    // PEP 552: bytes 4–8 are the flags (0b11: checked hash), 8–16 the source's hash
    expect(pyc.readUInt32LE(4)).toBe(0b11);
    const hash = python(
      'import importlib.util, sys; print(importlib.util.source_hash(open(sys.argv[1], "rb").read()).hex())',
      SOURCE,
    );
    // stale after an edit of the plugin until `pnpm build` (scripts/bundle.mjs) compiles it again
    expect({ sourceHash: pyc.subarray(8, 16).toString('hex') }).toEqual({ sourceHash: hash });
  });
});
