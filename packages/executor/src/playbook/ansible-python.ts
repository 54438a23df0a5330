// Which Python runs ansible-playbook: the interpreter its `#!` line names. The run launch uses it (run-launch.ts) and
// so does the build, which precompiles the callback plugin for that interpreter (scripts/callback-bytecode.mjs).
import fsSync from 'node:fs';
import path from 'node:path';

export interface AnsiblePython {
  /** the interpreter, an absolute path (a name after `env` is found on the search path) */
  interpreter: string;
  /** ansible-playbook, found on the search path */
  script: string;
  /** the `#!` line is the interpreter alone: no options, which would change how Python runs the script */
  alone: boolean;
}

/** `command` found on `searchPath` as `which` would: an executable file. */
function onPath(command: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(path.delimiter)) {
    const candidate = path.resolve(dir || '.', command);
    try {
      fsSync.accessSync(candidate, fsSync.constants.X_OK);
      if (fsSync.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function firstLine(file: string): string | undefined {
  try {
    const fd = fsSync.openSync(file, 'r');
    try {
      const head = Buffer.alloc(256);
      const length = fsSync.readSync(fd, head, 0, head.length, 0);
      return head.subarray(0, length).toString('utf8').split('\n', 1)[0];
    } finally {
      fsSync.closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/**
 * ansible-playbook on `searchPath` and the Python its `#!` line names: `#!/usr/bin/python3`, or through env
 * (`#!/usr/bin/env [-S] [NAME=value…] python3 …`: the first word that is neither an option nor an assignment).
 * Undefined when there is no ansible-playbook or it names no Python.
 */
export function ansiblePython(searchPath: string): AnsiblePython | undefined {
  const script = onPath('ansible-playbook', searchPath);
  const line = script && firstLine(script);
  const words = line
    ? (/^#!(.*)$/
        .exec(line)?.[1]
        ?.trim()
        .split(/[ \t]+/) ?? [])
    : [];
  const viaEnv = path.basename(words[0] ?? '') === 'env';
  const named = viaEnv ? words.slice(1).find((w) => !w.startsWith('-') && !w.includes('=')) : words[0];
  if (!script || !named || !/^python[0-9.]*$/.test(path.basename(named))) return undefined;
  const interpreter = named.includes('/') ? named : onPath(named, searchPath);
  return interpreter ? { interpreter, script, alone: words.length === (viaEnv ? 2 : 1) } : undefined;
}
