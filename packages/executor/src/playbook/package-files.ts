// Files the executor ships in its package, beside src/ and dist/, that run-time processes read. Found through the
// package's own name rather than this module's location: this code also runs from the apps' bundles
// (scripts/bundle.mjs), which live elsewhere.
import { createRequire } from 'node:module';
import path from 'node:path';

const PACKAGE_DIR = path.dirname(createRequire(import.meta.url).resolve('@baton/executor/package.json'));

/** Baton's callback plugin (baton_events.py): ANSIBLE_CALLBACK_PLUGINS. */
export const CALLBACK_PLUGIN_DIR = path.join(PACKAGE_DIR, 'callback');

/** The Python waiter of a run's launch (run-launch.ts); not beside the callback plugin, which ansible would load. */
export const PYTHON_LAUNCHER_DIR = path.join(PACKAGE_DIR, 'launcher');
export const PYTHON_LAUNCHER = path.join(PYTHON_LAUNCHER_DIR, 'python_launch.py');
