// Where `baton worker` daemons say they are alive (ARCHITECTURE.md, "Processes"): one Redis hash per
// installation, `${prefix}:workers`, field = worker name, value = its last heartbeat as JSON. Workers never open
// the database, so the API replicas read this hash and mirror it into their workers table.
import { closeRedis, openRedis } from './redis-connection.js';

export interface WorkerHeartbeat {
  name: string;
  host: string;
  pid: number;
  labels: string[];
  capacity: number;
  /** run ids held now */
  running: string[];
  /** ISO time */
  last_heartbeat: string;
  /** latest lease expiry among held runs, ISO */
  lease_expires_at: string | null;
  /** when this daemon started */
  started_at: string;
  /** true on the last beat of a graceful stop */
  stopped?: boolean;
  /** Set while the daemon leases no new run, and why: its unsent-event buffer is full (Redis unreachable for long). */
  paused?: 'event_buffer_full';
}

export interface WorkerRegistry {
  /** HSET `${prefix}:workers` name → JSON */
  beat(h: WorkerHeartbeat): Promise<void>;
  /** every entry; malformed ones skipped */
  list(): Promise<WorkerHeartbeat[]>;
  close(): Promise<void>;
}

export interface WorkerRegistryOptions {
  redisUrl: string;
  prefix: string;
  onError?: (err: unknown) => void;
}

/** A heartbeat that cannot be stored (no name, wrong field types): the caller's bug, named. */
export class WorkerHeartbeatError extends Error {
  override readonly name = 'WorkerHeartbeatError';
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
const isIsoTime = (v: unknown): v is string => isString(v) && !Number.isNaN(Date.parse(v));

/** Why a value is not a heartbeat, or undefined when it is one. */
function heartbeatProblem(h: unknown): string | undefined {
  if (typeof h !== 'object' || h === null || Array.isArray(h)) return 'not an object';
  const o = h as Record<string, unknown>;
  if (!isString(o.name) || o.name.length === 0) return 'name must be a non-empty string';
  if (!isString(o.host)) return 'host must be a string';
  if (!Number.isInteger(o.pid)) return 'pid must be an integer';
  if (!isStringArray(o.labels)) return 'labels must be a list of strings';
  if (!Number.isInteger(o.capacity) || (o.capacity as number) < 0) return 'capacity must be a whole number';
  if (!isStringArray(o.running)) return 'running must be a list of run ids';
  if (!isIsoTime(o.last_heartbeat)) return 'last_heartbeat must be an ISO time';
  if (o.lease_expires_at !== null && !isIsoTime(o.lease_expires_at))
    return 'lease_expires_at must be an ISO time or null';
  if (!isIsoTime(o.started_at)) return 'started_at must be an ISO time';
  if (o.stopped !== undefined && typeof o.stopped !== 'boolean') return 'stopped must be a boolean';
  if (o.paused !== undefined && o.paused !== 'event_buffer_full') return "paused must be 'event_buffer_full'";
  return undefined;
}

/** Only the known fields: whatever else a newer or broken writer put there is not passed on. */
function pickHeartbeat(o: WorkerHeartbeat): WorkerHeartbeat {
  return {
    name: o.name,
    host: o.host,
    pid: o.pid,
    labels: [...o.labels],
    capacity: o.capacity,
    running: [...o.running],
    last_heartbeat: o.last_heartbeat,
    lease_expires_at: o.lease_expires_at,
    started_at: o.started_at,
    ...(o.stopped !== undefined ? { stopped: o.stopped } : {}),
    ...(o.paused !== undefined ? { paused: o.paused } : {}),
  };
}

function parseHeartbeat(name: string, raw: string): WorkerHeartbeat | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  // The field is the name: an entry whose JSON names another worker is not trusted either.
  if (heartbeatProblem(value) !== undefined || (value as WorkerHeartbeat).name !== name) return undefined;
  return pickHeartbeat(value as WorkerHeartbeat);
}

export function createWorkerRegistry({ redisUrl, prefix, onError }: WorkerRegistryOptions): WorkerRegistry {
  const redis = openRedis(redisUrl, `${prefix}:worker-registry`, { onError });
  const key = `${prefix}:workers`;
  return {
    async beat(h) {
      const problem = heartbeatProblem(h);
      if (problem) throw new WorkerHeartbeatError(`worker heartbeat refused: ${problem}`);
      await redis.hset(key, h.name, JSON.stringify(pickHeartbeat(h)));
    },
    async list() {
      const entries = await redis.hgetall(key);
      const beats: WorkerHeartbeat[] = [];
      for (const [name, raw] of Object.entries(entries)) {
        const parsed = parseHeartbeat(name, raw);
        if (parsed) beats.push(parsed);
      }
      return beats.sort((a, b) => a.name.localeCompare(b.name));
    },
    close: () => closeRedis(redis),
  };
}
