import { describe, expect, it } from '@jest/globals';
import { parseRange } from './byte-range.js';

describe('parseRange', () => {
  it.each([
    ['bytes=0-9', { start: 0, end: 9 }],
    ['bytes=5-5', { start: 5, end: 5 }],
    ['bytes=20-', { start: 20 }],
    ['bytes=-7', { suffix: 7 }],
    ['BYTES = 1-2', { start: 1, end: 2 }],
    ['bytes= 3-4 ', { start: 3, end: 4 }],
    ['bytes=0-99999999999999999999999', { start: 0, end: Number.MAX_SAFE_INTEGER }],
  ])('reads %s as one range', (header, range) => {
    expect(parseRange(header)).toEqual({ kind: 'single', range });
  });

  it('tells several ranges, an unknown unit, no header and an invalid specifier apart', () => {
    expect(parseRange('bytes=0-1, 5-6')).toEqual({ kind: 'multiple' });
    expect(parseRange('bytes=0-1,-3')).toEqual({ kind: 'multiple' });
    expect(parseRange(undefined)).toEqual({ kind: 'none' });
    expect(parseRange('items=0-1')).toEqual({ kind: 'none' });
    for (const bad of [
      'bytes=9-3',
      'bytes=',
      'bytes=abc',
      'bytes=1-2-3',
      'bytes=-',
      'bytes=0-1,',
      'bytes=+1-2',
      '0-9',
      'bytes=0x1-2',
    ]) {
      expect({ bad, parsed: parseRange(bad) }).toEqual({ bad, parsed: { kind: 'invalid' } });
    }
  });
});
