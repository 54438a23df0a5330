// ansible-inventory costs about a second of Python per call, and storing or submitting the same inventory content
// again (a pipeline's steps, a template launched many times, a schedule firing, an inventory saved unchanged) asks it
// the same question. Its answer depends
// only on the content (and the limit), so successful answers are remembered, a bounded number of them, by digest.
import crypto from 'node:crypto';
import type { InventoryTool } from '@baton/core';

const digest = (...parts: string[]) => {
  const h = crypto.createHash('sha256');
  for (const p of parts) h.update(String(p.length)).update(':').update(p);
  return h.digest('hex');
};

/** A map that forgets its oldest entries beyond `size`; failed answers are never kept (a timeout may pass). */
export function memo<T>(size: number) {
  const entries = new Map<string, Promise<T>>();
  return (key: string, compute: () => Promise<T>): Promise<T> => {
    const known = entries.get(key);
    if (known) {
      // Most recently used last, so the oldest is first to go.
      entries.delete(key);
      entries.set(key, known);
      return known;
    }
    const answer = compute();
    entries.set(key, answer);
    answer.catch(() => entries.delete(key));
    while (entries.size > size) entries.delete(entries.keys().next().value!);
    return answer;
  };
}

export type Memo<T> = ReturnType<typeof memo<T>>;

/**
 * ansible-inventory's reading of stored inventory content, remembered the same way (each caller gets a copy).
 * `cache`: one to share between wirings of a process (see inventory.wiring.ts).
 */
export function memoizeInventoryParser<T>(
  parse: (content: string) => Promise<T>,
  size = 256,
  parsed: Memo<T> = memo<T>(size),
) {
  return async (content: string): Promise<T> => structuredClone(await parsed(digest(content), () => parse(content)));
}

export type InventoryToolCaches = {
  parsed: Memo<{ format: Awaited<ReturnType<InventoryTool['parse']>>['format'] }>;
  listed: Memo<Awaited<ReturnType<InventoryTool['hosts']>>>;
};

export const inventoryToolCaches = (size = 256): InventoryToolCaches => ({ parsed: memo(size), listed: memo(size) });

export function memoizeInventoryTool(
  tool: InventoryTool,
  size = 256,
  { parsed, listed }: InventoryToolCaches = inventoryToolCaches(size),
): InventoryTool {
  return {
    parse: (content) => parsed(digest(content), () => tool.parse(content).then(({ format }) => ({ format }))),
    // Callers get their own copy: the host list is an object they could change.
    hosts: async (o) => structuredClone(await listed(digest(o.content, o.limit ?? '\0'), () => tool.hosts(o))),
    forHosts: (list, hosts) => tool.forHosts(list, hosts),
  };
}
