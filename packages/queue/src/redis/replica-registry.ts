// API replicas sharing one queue prefix announce themselves, so a second replica can tell that the first one is
// on SQLite (ARCHITECTURE.md, "Processes": one API replica may run on SQLite with remote workers; a second is refused).
import type { Redis } from 'ioredis';

export interface ReplicaAnnouncement {
  name: string;
  database: 'sqlite' | 'postgres';
  /** ISO time of the last beat */
  at: string;
}

export class ReplicaConflictError extends Error {
  override name = 'ReplicaConflictError';
}

/** A replica silent this long is gone (it beats every few seconds). */
export const REPLICA_FRESH_MS = 15_000;

export interface ReplicaRegistry {
  /** Refuses (ReplicaConflictError) when a live replica on SQLite shares the prefix, or when this one is on SQLite and any live replica does; else announces this one. */
  join(): Promise<void>;
  beat(): Promise<void>;
  leave(): Promise<void>;
  /** The names of the replicas that beat recently, this one included (their event stream consumers are alive). */
  liveNames(): Promise<Set<string>>;
}

export function createReplicaRegistry(opts: {
  redis: Redis;
  prefix: string;
  name: string;
  database: 'sqlite' | 'postgres';
  now?: () => number;
  /** Tells a replica known to be dead though its last beat is fresh (one of this host whose process is gone), so a server restarted right after a crash is not refused by its own ghost. */
  isGone?: (announcement: ReplicaAnnouncement) => boolean;
}): ReplicaRegistry {
  const key = `${opts.prefix}:replicas`;
  const now = opts.now ?? Date.now;
  const announce = () =>
    opts.redis.hset(
      key,
      opts.name,
      JSON.stringify({
        name: opts.name,
        database: opts.database,
        at: new Date(now()).toISOString(),
      } satisfies ReplicaAnnouncement),
    );

  async function liveOthers(): Promise<ReplicaAnnouncement[]> {
    const entries = await opts.redis.hgetall(key);
    const live: ReplicaAnnouncement[] = [];
    for (const [name, raw] of Object.entries(entries)) {
      if (name === opts.name) continue;
      try {
        const a = JSON.parse(raw) as ReplicaAnnouncement;
        if (opts.isGone?.(a)) await opts.redis.hdel(key, name);
        else if (now() - Date.parse(a.at) <= REPLICA_FRESH_MS) live.push(a);
        // Long gone (killed without leaving): forget it.
        else if (now() - Date.parse(a.at) > 24 * 3600_000) await opts.redis.hdel(key, name);
      } catch {
        await opts.redis.hdel(key, name);
      }
    }
    return live;
  }

  return {
    async join() {
      const others = await liveOthers();
      const onSqlite = others.find((o) => o.database === 'sqlite');
      if (onSqlite) {
        throw new ReplicaConflictError(
          `another baton serve (${onSqlite.name}) runs on SQLite with queue prefix "${opts.prefix}"; a SQLite-backed server must be the only replica. Use PostgreSQL for several replicas, or another BATON_QUEUE_PREFIX for a separate installation`,
        );
      }
      if (opts.database === 'sqlite' && others.length > 0) {
        throw new ReplicaConflictError(
          `this baton serve runs on SQLite, but ${others.map((o) => o.name).join(', ')} already serve(s) queue prefix "${opts.prefix}"; several replicas need PostgreSQL, or use another BATON_QUEUE_PREFIX`,
        );
      }
      await announce();
    },
    async beat() {
      await announce();
    },
    async leave() {
      await opts.redis.hdel(key, opts.name);
    },
    async liveNames() {
      return new Set([opts.name, ...(await liveOthers()).map((other) => other.name)]);
    },
  };
}
