// How observation names what it groups by: a playbook (a project's path, or an inline playbook's content hash), a
// task (its playbook and task path), and a drift scope (inventory and playbook).
import crypto from 'node:crypto';

const sha256 = (s: string) => crypto.createHash('sha256').update(s, 'utf8').digest('hex');

/** What a run's playbook is called in observation: the path inside its project, or `inline:<hash>` of its YAML. */
export function playbookOf(run: { project_id: string | null; playbook: string; playbook_source: string }): {
  label: string;
  key: string;
} {
  if (run.playbook_source === 'project' && run.project_id) {
    return { label: run.playbook, key: `${run.project_id}:${run.playbook}` };
  }
  const label = `inline:${sha256(run.playbook).slice(0, 12)}`;
  return { label, key: label };
}

/** A task's key: its playbook and task path (opaque, URL-safe, stable across runs). */
export const taskKeyOf = (playbookKey: string, taskPath: string): string =>
  sha256(`${playbookKey}\n${taskPath}`).slice(0, 24);

/** Drift is tracked per inventory (inline inventories together) and playbook. */
export const driftScopeOf = (inventoryId: string | null, playbookKey: string): string =>
  `${inventoryId ?? 'inline'}|${playbookKey}`;

/** A drifting resource inside its scope and host: the task path and, for a loop, the item. */
export const resourceOf = (taskPath: string, item: string | null): string =>
  item === null ? taskPath : `${taskPath}\u0001${item}`;
