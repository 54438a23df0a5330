import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './config.js';

const TOKEN = 'prom-scrape-token-0123456789';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-metrics-token-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function tokenFile(name: string, content: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content, { mode: 0o600 });
  return file;
}

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('loadConfig accepted it');
}

describe('BATON_METRICS_TOKEN', () => {
  it('is unset by default (and when empty): /metrics stays open', () => {
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ BATON_METRICS_TOKEN: '', BATON_METRICS_TOKEN_FILE: '' }).metricsToken).toBeUndefined();
  });

  it('takes the token as given, or from BATON_METRICS_TOKEN_FILE without its final newline', () => {
    expect(loadConfig({ BATON_METRICS_TOKEN: TOKEN }).metricsToken).toBe(TOKEN);
    expect(loadConfig({ BATON_METRICS_TOKEN_FILE: tokenFile('echoed', `${TOKEN}\n`) }).metricsToken).toBe(TOKEN);
    expect(loadConfig({ BATON_METRICS_TOKEN_FILE: tokenFile('crlf', `${TOKEN}\r\n`) }).metricsToken).toBe(TOKEN);
    expect(loadConfig({ BATON_METRICS_TOKEN_FILE: tokenFile('bare', TOKEN) }).metricsToken).toBe(TOKEN);
  });

  it.each([
    ['too short', 'short-token-15ch'.slice(0, 15)],
    ['with a space', 'prom scrape token 0123456789'],
    ['not ASCII', 'prom-scrape-tökén-0123456789'],
    ['too long', 'x'.repeat(1025)],
  ])('refuses a token %s, naming the variable and not echoing it', (_what, token) => {
    const message = configError({ BATON_METRICS_TOKEN: token });
    expect(message).toContain('BATON_METRICS_TOKEN: must be 16 to 1024 visible ASCII characters without spaces');
    expect(message).not.toContain(token);
  });

  it('refuses both variables at once, a file it cannot read, and a file whose token is bad', () => {
    expect(configError({ BATON_METRICS_TOKEN: TOKEN, BATON_METRICS_TOKEN_FILE: tokenFile('both', TOKEN) })).toContain(
      'BATON_METRICS_TOKEN_FILE: give either BATON_METRICS_TOKEN or this, not both',
    );
    const missing = path.join(dir, 'missing');
    expect(configError({ BATON_METRICS_TOKEN_FILE: missing })).toContain(
      `BATON_METRICS_TOKEN_FILE: cannot read ${missing}: ENOENT`,
    );
    const empty = tokenFile('empty', '\n');
    expect(configError({ BATON_METRICS_TOKEN_FILE: empty })).toContain(
      `BATON_METRICS_TOKEN_FILE: ${empty}: the token must be`,
    );
    const spaced = tokenFile('spaced', 'two words in a token file\n');
    const message = configError({ BATON_METRICS_TOKEN_FILE: spaced });
    expect(message).toContain(`BATON_METRICS_TOKEN_FILE: ${spaced}: the token must be`);
    expect(message).not.toContain('two words');
  });
});
