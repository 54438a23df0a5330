// bench/analytics: a synthetic but realistic run history, as the ingester hands finished runs to recordRollups.
// 20 projects (one playbook of 20 tasks each), 10 inventories of 200 hosts, runs of 10 hosts (an inventory group,
// a busy canary group more often than the rest), a few submitters, ~10% dry runs. Hosts behave: a few are slow,
// flaky (fail every other run), down (unreachable) or drifting; two tasks slow down over the history; ~2% of host
// runs fail somewhere. Deterministic for a given seed, so two sizes of one database grow the same history.
import type { FinishedRun } from '@baton/core';
import { newId } from '@baton/core';
import type { HostCounts } from '@baton/contracts';
import type { RunRow, RunTaskResultRow } from '@baton/db';

export const PROJECTS = 20;
export const TASKS_PER_PLAYBOOK = 20;
export const INVENTORIES = 10;
export const HOSTS_PER_INVENTORY = 200;
export const HOSTS_PER_RUN = 10;
const GROUPS = HOSTS_PER_INVENTORY / HOSTS_PER_RUN;
/** One run finishes every 2.5 minutes on average: 200,000 runs are about a year. */
const RUN_SPACING_MS = 150_000;
const SLOW_CYCLE = 5000;

/** A small fast PRNG (mulberry32): the history must not depend on Math.random. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Task {
  name: string;
  path: string;
  action: string;
  /** a typical duration in ms */
  baseMs: number;
  /** gets slower and slower (up to 3×), then back to normal, over and over */
  slowsDown: boolean;
  /** a loop over these items (drift is reported per item) */
  items?: string[];
  /** skipped on every host (a `when:` that is false) */
  alwaysSkipped?: boolean;
  /** a command: skipped in check mode (the host then cannot be assessed) */
  commandSkippedInCheck?: boolean;
}

export interface Project {
  id: string;
  name: string;
  playbook: string;
  tasks: Task[];
  /** the two inventories it deploys to, and a template for each */
  inventories: [number, number];
  templates: [string, string];
  /** relative share of the runs */
  weight: number;
}

export interface Inventory {
  id: string;
  name: string;
  hosts: string[];
}

interface HostTraits {
  slow: number;
  flaky: boolean;
  down: boolean;
  /** the task index that drifts on this host (its config gets edited by hand), or -1 */
  drifts: number;
}

const SITES = ['fra', 'ams', 'iad', 'sfo', 'sin', 'syd', 'gru', 'lhr', 'nrt', 'dub'];
const ROLES = ['web', 'app', 'db', 'cache', 'queue', 'lb', 'search', 'worker', 'mail', 'dns'];
const TASK_SHAPES: Array<Omit<Task, 'path' | 'slowsDown'>> = [
  { name: 'Gather facts', action: 'ansible.builtin.gather_facts', baseMs: 1800 },
  { name: 'Install base packages', action: 'ansible.builtin.apt', baseMs: 4200, items: ['curl', 'jq', 'chrony'] },
  { name: 'Create service user', action: 'ansible.builtin.user', baseMs: 350 },
  { name: 'Create directories', action: 'ansible.builtin.file', baseMs: 300, items: ['/etc/app', '/var/lib/app'] },
  { name: 'Write sysctl tuning', action: 'ansible.posix.sysctl', baseMs: 420 },
  { name: 'Install debug tools', action: 'ansible.builtin.apt', baseMs: 0, alwaysSkipped: true },
  { name: 'Render application config', action: 'ansible.builtin.template', baseMs: 650 },
  { name: 'Render nginx site', action: 'ansible.builtin.template', baseMs: 600 },
  { name: 'Copy TLS certificate', action: 'ansible.builtin.copy', baseMs: 480 },
  { name: 'Download release', action: 'ansible.builtin.get_url', baseMs: 2600 },
  { name: 'Unpack release', action: 'ansible.builtin.unarchive', baseMs: 3100 },
  { name: 'Run database migrations', action: 'ansible.builtin.command', baseMs: 5200, commandSkippedInCheck: true },
  { name: 'Restart application', action: 'ansible.builtin.systemd', baseMs: 1500 },
  { name: 'Reload nginx', action: 'ansible.builtin.service', baseMs: 700 },
  { name: 'Wait for health check', action: 'ansible.builtin.uri', baseMs: 2200 },
  { name: 'Configure log rotation', action: 'ansible.builtin.copy', baseMs: 380 },
  { name: 'Configure firewall', action: 'community.general.ufw', baseMs: 900, items: ['22/tcp', '443/tcp'] },
  { name: 'Enable metrics exporter', action: 'ansible.builtin.systemd', baseMs: 800 },
  { name: 'Register with load balancer', action: 'ansible.builtin.uri', baseMs: 1100 },
  { name: 'Clean up old releases', action: 'ansible.builtin.shell', baseMs: 950 },
];
/** Where flaky hosts fail (every other run): the restart that sometimes times out. */
const FLAKY_TASK = 12;
/** Config tasks a hand edit can put out of place (drift). */
const DRIFTABLE_TASKS = [4, 6, 7, 8, 15];
const FAILURE_MESSAGES = [
  'non-zero return code',
  'Failed to lock apt for exclusive operation: Failed to lock directory /var/lib/apt/lists/',
  'Status code was 503 and not [200]: HTTP Error 503: Service Unavailable',
  'Request failed: <urlopen error [Errno 110] Connection timed out>',
  'Destination /etc/app not writable',
];

const pad = (n: number, w: number) => String(n).padStart(w, '0');

/** The projects, inventories and host traits of the fleet (ids made by the caller, who also stores the rows). */
export function createWorld(seed = 14) {
  const rnd = prng(seed);
  const inventories: Inventory[] = Array.from({ length: INVENTORIES }, (_, i) => ({
    id: newId('inv'),
    name: `${SITES[i]}-${i < 6 ? 'prod' : 'staging'}`,
    hosts: Array.from(
      { length: HOSTS_PER_INVENTORY },
      (_, h) => `${ROLES[Math.floor(h / GROUPS) % ROLES.length]}-${pad(h, 3)}.${SITES[i]}.example.com`,
    ),
  }));
  const projects: Project[] = Array.from({ length: PROJECTS }, (_, p) => {
    const playbook = `deploy-${pad(p + 1, 2)}.yml`;
    // Tasks 3 and 9 of two playbooks slow down as the history grows (a growing table, a slower mirror).
    const slowing = p === 2 ? 3 : p === 11 ? 9 : -1;
    return {
      id: newId('prj'),
      name: `service-${pad(p + 1, 2)}`,
      playbook,
      tasks: TASK_SHAPES.map((shape, t) => ({
        ...shape,
        baseMs: Math.round(shape.baseMs * (0.6 + rnd() * 0.8)),
        path: t < 4 ? `${playbook}:${12 + t * 7}` : `roles/${ROLES[p % ROLES.length]}/tasks/main.yml:${t * 9 + 3}`,
        slowsDown: t === slowing,
      })),
      inventories: [p % INVENTORIES, (p + 3) % INVENTORIES],
      templates: [newId('tpl'), newId('tpl')],
      // Some services deploy far more often than others.
      weight: 1 / (1 + (p % 7)),
    };
  });
  const traits = new Map<string, HostTraits>();
  for (const inv of inventories)
    for (const host of inv.hosts)
      traits.set(host, { slow: rnd() < 0.02 ? 2.5 + rnd() * 2 : 1, flaky: false, down: false, drifts: -1 });
  // Per inventory: one host is flaky (and host 3, in the canary group, of three of them), every third inventory has a host that is down,
  // and a dozen hosts have a config that keeps being edited by hand.
  inventories.forEach((inv, i) => {
    if (i < 3) traits.get(inv.hosts[3]!)!.flaky = true;
    traits.get(inv.hosts[40 + i]!)!.flaky = true;
    if (i % 3 === 0) traits.get(inv.hosts[120 + i]!)!.down = true;
    for (let k = 0; k < 12; k++)
      traits.get(inv.hosts[(k * 17 + i) % HOSTS_PER_INVENTORY]!)!.drifts = DRIFTABLE_TASKS[k % DRIFTABLE_TASKS.length]!;
  });
  return { projects, inventories, traits };
}
export type World = ReturnType<typeof createWorld>;

export interface People {
  /** submitters and their share of the runs (the operator's own runs are on projects granted to them) */
  submitters: Array<{ id: string; weight: number; projects?: readonly string[] }>;
}

function pick<T>(rnd: () => number, list: readonly T[], weight: (t: T) => number): T {
  const total = list.reduce((s, t) => s + weight(t), 0);
  let x = rnd() * total;
  for (const t of list) if ((x -= weight(t)) < 0) return t;
  return list[list.length - 1]!;
}

const emptyCounts = (): HostCounts => ({
  ok: 0,
  changed: 0,
  failed: 0,
  unreachable: 0,
  skipped: 0,
  rescued: 0,
  ignored: 0,
});

const diffOf = (task: Task, host: string, k: number, item?: string) => ({
  before_header: item ?? `/etc/app/${task.name.toLowerCase().replace(/ /g, '-')}.conf`,
  after_header: item ?? `/etc/app/${task.name.toLowerCase().replace(/ /g, '-')}.conf`,
  before: `# edited by hand on ${host}\nworkers = ${(k % 7) + 1}\n`,
  after: `# managed by ansible\nworkers = 8\n`,
});

/**
 * Run k of `total` (k from 0), finishing at a time that grows with k. State: each host's run count (the flaky hosts
 * alternate) and the commit each project is at.
 */
export function createHistory(world: World, people: People, total: number, seed = 14) {
  const hostRuns = new Map<string, number>();
  const start = Date.now() - total * RUN_SPACING_MS;
  const commitOf = (p: number, k: number) =>
    // A new commit about every 300 runs of the history.
    (BigInt(p + 1) * 0x9e3779b97f4a7c15n + BigInt(Math.floor(k / 300)) * 0x632be59bd9b4e019n)
      .toString(16)
      .padStart(40, '0')
      .slice(-40);

  return function run(k: number): FinishedRun {
    const rnd = prng(seed * 1_000_003 + k);
    const project = pick(rnd, world.projects, (p) => p.weight);
    const pIndex = world.projects.indexOf(project);
    const side = rnd() < 0.7 ? 0 : 1;
    const inventory = world.inventories[project.inventories[side]]!;
    const submitter = pick(
      rnd,
      people.submitters.filter((s) => !s.projects || s.projects.includes(project.id)),
      (s) => s.weight,
    );
    const check = rnd() < 0.1;
    // The canary group (hosts 0–9) takes 30% of the runs; the other groups share the rest.
    const group = rnd() < 0.3 ? 0 : 1 + Math.floor(rnd() * (GROUPS - 1));
    const hosts = inventory.hosts.slice(group * HOSTS_PER_RUN, (group + 1) * HOSTS_PER_RUN);
    // The slowing tasks grow to 3× over cycles of 5,000 runs (a table that grows until it is archived), in the
    // late part of a cycle at 20,000 and 200,000 runs, so their last runs show the trend.
    const slowdown = 1 + (2 * ((k + SLOW_CYCLE - 1000) % SLOW_CYCLE)) / SLOW_CYCLE;
    const finishedMs = start + k * RUN_SPACING_MS + Math.floor(rnd() * 60_000);
    const id = newId('run', finishedMs);

    const stats: Record<string, HostCounts> = {};
    const results: RunTaskResultRow[] = [];
    const taskUuids = project.tasks.map(() => crypto.randomUUID());
    // Per host: its results in task order; the play's tasks run host by host in ansible's order, so seq follows tasks.
    const perHost = hosts.map((host) => {
      const traits = world.traits.get(host)!;
      const n = (hostRuns.get(host) ?? 0) + 1;
      hostRuns.set(host, n);
      const counts = emptyCounts();
      stats[host] = counts;
      let stopAt = TASKS_PER_PLAYBOOK;
      let stop: { status: 'failed' | 'unreachable'; message: string } | null = null;
      if (traits.down || rnd() < 0.003) {
        stopAt = 0;
        stop = {
          status: 'unreachable',
          message: `Failed to connect to the host via ssh: ssh: connect to host ${host} port 22: Connection timed out`,
        };
      } else if (traits.flaky && n % 2 === 0) {
        stopAt = FLAKY_TASK;
        stop = {
          status: 'failed',
          message: 'Unable to restart service app: Job for app.service failed because a timeout was exceeded.',
        };
      } else if (rnd() < 0.01) {
        stopAt = 1 + Math.floor(rnd() * (TASKS_PER_PLAYBOOK - 1));
        if (project.tasks[stopAt]!.alwaysSkipped) stopAt += 1;
        stop = { status: 'failed', message: FAILURE_MESSAGES[Math.floor(rnd() * FAILURE_MESSAGES.length)]! };
      }
      return { host, traits, counts, stopAt, stop };
    });

    // Tasks back to back, each as long as its usual slowest host; every result of a task starts with it.
    const taskAt: number[] = [];
    const planMs = project.tasks.reduce((at, task) => (taskAt.push(at), at + Math.round(task.baseMs * 1.4)), 0);
    const startedMs = finishedMs - planMs - 4000;
    const taskStartIso = taskAt.map((at) => new Date(startedMs + 2000 + at).toISOString());
    let seq = 2; // 1 is the playbook's start
    project.tasks.forEach((task, t) => {
      const skipped = task.alwaysSkipped || (check && task.commandSkippedInCheck && pIndex === 5);
      for (const h of perHost) {
        if (t > h.stopAt || (t === h.stopAt && !h.stop)) continue;
        let status = 'ok';
        let changed = 0;
        let ms = 0;
        let message: string | null = null;
        let changes: string | null = null;
        if (t === h.stopAt) {
          status = h.stop!.status;
          message = h.stop!.message;
          // A failure takes its time too (a timeout, a retry); the ssh timeout of an unreachable host is not a task's.
          ms = status === 'failed' ? Math.round(task.baseMs * h.traits.slow * 1.5) : 0;
          h.counts[h.stop!.status] += 1;
        } else if (skipped) {
          status = 'skipped';
          message = task.alwaysSkipped ? 'Conditional result was False' : 'Command would have run if not in check mode';
          h.counts.skipped += 1;
        } else {
          const jitter = Math.exp((rnd() - 0.5) * 0.5);
          ms = Math.max(5, Math.round(task.baseMs * h.traits.slow * jitter * (task.slowsDown ? slowdown : 1)));
          // A hand-edited config shows up in most dry runs and gets fixed by half the real runs; anything else
          // changes now and then (a real run) or rarely drifts (a dry run).
          const drifting = h.traits.drifts === t && rnd() < (check ? 0.8 : 0.5);
          if (drifting || rnd() < (check ? 0.004 : 0.03)) {
            changed = 1;
            const item = task.items ? task.items[Math.floor(rnd() * task.items.length)] : undefined;
            const diff = check ? diffOf(task, h.host, k, item) : null;
            changes = JSON.stringify([item ? { item, diff } : { diff }]);
            h.counts.changed += 1;
          }
          h.counts.ok += 1;
        }
        results.push({
          run_id: id,
          seq: seq++,
          task_uuid: taskUuids[t]!,
          task: task.name,
          task_path: task.path,
          host: h.host,
          status,
          changed,
          started_at: taskStartIso[t]!,
          ended_at: new Date(startedMs + 2000 + taskAt[t]! + ms).toISOString(),
          duration_ms: ms,
          action: task.action,
          message,
          no_log: 0,
          changes,
        });
      }
    });

    const failedHosts = perHost.filter((h) => h.stop !== null).length;
    const finishedAt = new Date(finishedMs).toISOString();
    const withTemplate = rnd() < 0.7;
    const row: RunRow = {
      id,
      kind: 'run',
      parent_id: null,
      shard_index: null,
      shard_count: null,
      retry_of: null,
      status: 'finished',
      conclusion: failedHosts > 0 ? 'failed' : 'succeeded',
      reason: null,
      playbook_source: 'project',
      playbook: project.playbook,
      project_id: project.id,
      git_commit: commitOf(pIndex, k),
      git_ref: null,
      template_id: withTemplate ? project.templates[side] : null,
      inventory_id: inventory.id,
      inventory_content: null,
      inventory_format: null,
      host_limit: `${ROLES[group % ROLES.length]}_g${pad(group, 2)}`,
      hosts: null,
      extra_vars: withTemplate ? { release: `2026.${(k % 52) + 1}` } : null,
      credential_ids: [],
      check_mode: check ? 1 : 0,
      forks: null,
      verbosity: null,
      timeout_s: null,
      labels: [],
      submitted_by: submitter.id,
      worker: 'executor-1',
      exit_code: failedHosts > 0 ? (perHost.some((h) => h.stop?.status === 'unreachable') ? 4 : 2) : 0,
      stats,
      last_seq: seq + 1, // the stats and the final status
      log_lines: results.length * 2 + 40,
      log_bytes: results.length * 120 + 2000,
      output_truncated: 0,
      created_at: new Date(startedMs - 800).toISOString(),
      started_at: new Date(startedMs).toISOString(),
      finished_at: finishedAt,
      cancel_requested_at: null,
      origin: withTemplate ? 'template' : 'api',
      schedule_id: null,
      trigger_id: null,
      step_index: null,
      step_name: null,
      run_if: null,
      survey_answers: null,
      secret_vars_enc: null,
      held_by: null,
      hold_policies: null,
      hold_expires_at: null,
      output_pruned_at: null,
    };
    return { run: row, stats, results };
  };
}
