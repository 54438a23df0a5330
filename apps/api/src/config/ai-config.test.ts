import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './config.js';

const KEY = 'sk-test-0123456789abcdef';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-ai-config-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('loadConfig accepted it');
}

describe('BATON_AI_*', () => {
  it('configures no provider by default; the ask rate is 10 a minute', () => {
    const config = loadConfig({});
    expect(config.aiProvider).toBeUndefined();
    expect(config.aiAskRate).toBe(10);
  });

  it('reads the provider, its defaults per protocol, and the key inline or from a file', () => {
    expect(
      loadConfig({ BATON_AI_PROVIDER: 'openai', BATON_AI_MODEL: 'gpt-4o-mini', BATON_AI_API_KEY: KEY }).aiProvider,
    ).toEqual({
      provider: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      model: 'gpt-4o-mini',
      apiKey: KEY,
      timeoutMs: 60_000,
      maxOutputTokens: 2000,
    });
    const file = path.join(dir, 'key');
    fs.writeFileSync(file, `${KEY}\n`, { mode: 0o600 });
    expect(
      loadConfig({
        BATON_AI_PROVIDER: 'anthropic',
        BATON_AI_MODEL: 'claude-test',
        BATON_AI_API_KEY_FILE: file,
        BATON_AI_TIMEOUT_S: '30',
        BATON_AI_MAX_OUTPUT_TOKENS: '512',
        BATON_AI_ASK_RATE: '4',
      }),
    ).toMatchObject({
      aiProvider: {
        provider: 'anthropic',
        baseUrl: 'https://api.anthropic.com',
        apiKey: KEY,
        timeoutMs: 30_000,
        maxOutputTokens: 512,
      },
      aiAskRate: 4,
    });
    // A local server needs no key.
    expect(
      loadConfig({
        BATON_AI_PROVIDER: 'openai',
        BATON_AI_MODEL: 'llama3.1',
        BATON_AI_BASE_URL: 'http://127.0.0.1:11434/v1',
      }).aiProvider,
    ).toMatchObject({ baseUrl: 'http://127.0.0.1:11434/v1', apiKey: undefined });
  });

  it.each([
    [{ BATON_AI_PROVIDER: 'bard', BATON_AI_MODEL: 'm' }, 'BATON_AI_PROVIDER'],
    [{ BATON_AI_PROVIDER: 'openai' }, 'BATON_AI_MODEL'],
    [{ BATON_AI_MODEL: 'm' }, 'BATON_AI_MODEL: needs BATON_AI_PROVIDER'],
    [
      { BATON_AI_PROVIDER: 'openai', BATON_AI_MODEL: 'm', BATON_AI_BASE_URL: 'file:///etc/passwd' },
      'BATON_AI_BASE_URL',
    ],
    [
      { BATON_AI_PROVIDER: 'openai', BATON_AI_MODEL: 'm', BATON_AI_BASE_URL: 'https://u:p@x.example/v1' },
      'BATON_AI_BASE_URL',
    ],
    [{ BATON_AI_PROVIDER: 'openai', BATON_AI_MODEL: 'm', BATON_AI_TIMEOUT_S: '0' }, 'BATON_AI_TIMEOUT_S'],
    [
      { BATON_AI_PROVIDER: 'openai', BATON_AI_MODEL: 'm', BATON_AI_MAX_OUTPUT_TOKENS: 'lots' },
      'BATON_AI_MAX_OUTPUT_TOKENS',
    ],
    [{ BATON_AI_ASK_RATE: '-1' }, 'BATON_AI_ASK_RATE'],
    [
      { BATON_AI_PROVIDER: 'openai', BATON_AI_MODEL: 'm', BATON_AI_API_KEY: KEY, BATON_AI_API_KEY_FILE: '/x' },
      'BATON_AI_API_KEY_FILE',
    ],
    [
      { BATON_AI_PROVIDER: 'openai', BATON_AI_MODEL: 'm', BATON_AI_API_KEY_FILE: '/nonexistent/key' },
      'BATON_AI_API_KEY_FILE',
    ],
    [{ BATON_AI_PROVIDER: 'openai', BATON_AI_MODEL: 'm', BATON_AI_API_KEY: 'has space' }, 'BATON_AI_API_KEY'],
  ])('refuses %j naming %s, never echoing a key', (env, variable) => {
    const message = configError(env as Record<string, string>);
    expect(message).toContain(variable);
    expect(message).not.toContain(KEY);
    expect(message).not.toContain('has space');
  });
});
