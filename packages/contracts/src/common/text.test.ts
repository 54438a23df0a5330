import { describe, expect, it } from '@jest/globals';
import { decodeUtf8Strictly, storableText, unstorableTextReason } from './text.js';

describe('text a database keeps as given', () => {
  it.each([
    ['\ud800', 'well-formed Unicode'],
    ['a\udc00b', 'well-formed Unicode'],
    ['\udfff\ud800', 'well-formed Unicode'],
    ['x\u0000y', 'NUL'],
  ])('refuses %j and names why', (text, why) => {
    expect(unstorableTextReason(text)).toContain(why);
  });

  it.each(['', 'plain', '😀 a surrogate pair', 'é\u202e\uFFFD'])('keeps %j as it is', (text) => {
    expect(unstorableTextReason(text)).toBeUndefined();
    expect(storableText(text)).toBe(text);
  });

  it('replaces each lone surrogate and NUL with U+FFFD, keeping pairs', () => {
    expect(storableText('a\ud800b\u0000c😀\udfff')).toBe('a\uFFFDb\uFFFDc😀\uFFFD');
  });

  it('decodes UTF-8 only, never replacing bytes that are not', () => {
    expect(decodeUtf8Strictly(Buffer.from('é😀', 'utf8'))).toBe('é😀');
    expect(decodeUtf8Strictly(new Uint8Array([0xff]))).toBeUndefined();
    expect(decodeUtf8Strictly(new Uint8Array([0xc0, 0xaf]))).toBeUndefined();
    expect(decodeUtf8Strictly(new Uint8Array([0xed, 0xa0, 0x80]))).toBeUndefined();
  });
});
