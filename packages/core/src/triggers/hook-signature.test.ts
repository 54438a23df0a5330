import crypto from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { hookSignature, verifyHookSignature } from './hook-signature.js';

const SECRET = 'correct-secret';
const body = Buffer.from('{"ref":"refs/heads/main"}');
const hex = (secret: string, b: Buffer = body) => crypto.createHmac('sha256', secret).update(b).digest('hex');

describe('verifyHookSignature', () => {
  it('accepts each forge’s way of signing, with the right secret only', () => {
    expect(verifyHookSignature({ 'x-hub-signature-256': `sha256=${hex(SECRET)}` }, body, SECRET)).toEqual({
      ok: true,
      scheme: 'github',
    });
    expect(verifyHookSignature({ 'x-gitea-signature': hex(SECRET) }, body, SECRET)).toEqual({
      ok: true,
      scheme: 'gitea',
    });
    expect(verifyHookSignature({ 'x-baton-signature-256': hookSignature(body, SECRET) }, body, SECRET)).toEqual({
      ok: true,
      scheme: 'baton',
    });
    expect(verifyHookSignature({ 'x-gitlab-token': SECRET }, body, SECRET)).toEqual({ ok: true, scheme: 'gitlab' });
    for (const headers of [
      { 'x-hub-signature-256': `sha256=${hex('wrong')}` },
      { 'x-gitea-signature': hex('wrong') },
      { 'x-baton-signature-256': `sha256=${hex('wrong')}` },
      { 'x-gitlab-token': 'wrong' },
      { 'x-gitlab-token': `${SECRET}x` },
    ])
      expect(verifyHookSignature(headers, body, SECRET)).toMatchObject({ ok: false });
  });

  it('refuses a tampered body, malformed digests and a missing signature', () => {
    const tampered = Buffer.from('{"ref":"refs/heads/evil"}');
    expect(verifyHookSignature({ 'x-hub-signature-256': `sha256=${hex(SECRET)}` }, tampered, SECRET)).toMatchObject({
      ok: false,
      scheme: 'github',
    });
    for (const value of [
      '',
      'sha256=',
      hex(SECRET),
      `sha1=${hex(SECRET)}`,
      `sha256=${hex(SECRET).slice(2)}`,
      'sha256=zz',
    ])
      expect(verifyHookSignature({ 'x-hub-signature-256': value }, body, SECRET)).toMatchObject({ ok: false });
    expect(verifyHookSignature({}, body, SECRET)).toMatchObject({ ok: false, scheme: null });
  });

  it('prefers Gitea’s own header over the GitHub one Gitea also sends, and never falls back', () => {
    const both = { 'x-gitea-signature': hex('wrong'), 'x-hub-signature-256': `sha256=${hex(SECRET)}` };
    expect(verifyHookSignature(both, body, SECRET)).toMatchObject({ ok: false, scheme: 'gitea' });
    const good = { 'x-gitea-signature': hex(SECRET), 'x-hub-signature-256': `sha256=${hex('wrong')}` };
    expect(verifyHookSignature(good, body, SECRET)).toEqual({ ok: true, scheme: 'gitea' });
  });

  it('accepts upper-case hex', () => {
    expect(verifyHookSignature({ 'x-gitea-signature': hex(SECRET).toUpperCase() }, body, SECRET)).toMatchObject({
      ok: true,
    });
  });
});
