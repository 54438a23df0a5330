import { describe, expect, it } from '@jest/globals';
import type { InventoryTool } from '@baton/core';
import { memoizeInventoryParser, memoizeInventoryTool } from './inventory-memo.js';

/** A stand-in for ansible-inventory that counts how often it is asked, and fails for content saying so. */
function countingTool() {
  const calls: string[] = [];
  const tool: InventoryTool = {
    parse: async (content) => {
      calls.push(`parse:${content}`);
      if (content.includes('fail')) throw new Error('ansible-inventory timed out');
      return { format: 'ini' };
    },
    hosts: async ({ content, limit }) => {
      calls.push(`hosts:${content}:${limit ?? ''}`);
      return { hosts: ['a', 'b'], list: { all: { hosts: ['a', 'b'] } } };
    },
    forHosts: (_list, hosts) => hosts.join(','),
  };
  return { tool, calls };
}

describe('memoizeInventoryTool', () => {
  it('asks once per content and limit, never keeps a failure, and forgets the least recently used', async () => {
    const { tool, calls } = countingTool();
    const memo = memoizeInventoryTool(tool, 2);
    expect(await memo.parse('x')).toEqual({ format: 'ini' });
    expect(await memo.parse('x')).toEqual({ format: 'ini' });
    await memo.parse('y');
    expect(calls).toEqual(['parse:x', 'parse:y']);
    // A failure is answered, and asked again next time.
    await expect(memo.parse('fail')).rejects.toThrow('timed out');
    await expect(memo.parse('fail')).rejects.toThrow('timed out');
    expect(calls.filter((c) => c === 'parse:fail')).toHaveLength(2);
    // Size 2: x was used before y, so after z it is gone; y stays.
    await memo.parse('y');
    await memo.parse('z');
    await memo.parse('x');
    expect(calls.filter((c) => c === 'parse:x')).toHaveLength(2);
    expect(calls.filter((c) => c === 'parse:y')).toHaveLength(1);

    await memo.hosts({ content: 'x' });
    await memo.hosts({ content: 'x', limit: 'web' });
    await memo.hosts({ content: 'x', limit: 'web' });
    expect(calls.filter((c) => c.startsWith('hosts:'))).toEqual(['hosts:x:', 'hosts:x:web']);
  });

  it('gives every caller its own copy of a host list', async () => {
    const { tool } = countingTool();
    const memo = memoizeInventoryTool(tool);
    const first = await memo.hosts({ content: 'x' });
    first.hosts.push('mutated');
    (first.list as { all: { hosts: string[] } }).all.hosts.length = 0;
    expect(await memo.hosts({ content: 'x' })).toEqual({ hosts: ['a', 'b'], list: { all: { hosts: ['a', 'b'] } } });
    expect(memo.forHosts({}, ['a', 'b'])).toBe('a,b');
  });

  it("remembers a stored inventory's reading by content, handing out copies", async () => {
    let calls = 0;
    const parse = memoizeInventoryParser(async (content: string) => {
      calls++;
      return { format: 'ini', hosts: [content] };
    });
    const first = await parse('web1');
    first.hosts.push('changed');
    expect(await parse('web1')).toEqual({ format: 'ini', hosts: ['web1'] });
    await parse('web2');
    expect(calls).toBe(2);
  });
});
