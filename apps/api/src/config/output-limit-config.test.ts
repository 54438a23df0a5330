import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './config.js';

describe('BATON_RUN_OUTPUT_LIMIT_MB', () => {
  it('is 100 MiB by default and read in mebibytes', () => {
    expect(loadConfig({}).runOutputLimitBytes).toBe(100 * 1024 * 1024);
    expect(loadConfig({ BATON_RUN_OUTPUT_LIMIT_MB: ' 1 ' }).runOutputLimitBytes).toBe(1024 * 1024);
    expect(loadConfig({ BATON_RUN_OUTPUT_LIMIT_MB: '2047' }).runOutputLimitBytes).toBe(2047 * 1024 * 1024);
  });

  // 2047 at most: the log's byte count (plus room for Baton's own lines) must fit PostgreSQL's 32-bit integer.
  it.each(['0', '2048', '1.5', '1e3', '0x10', 'lots', '-1'])('refuses %j at start, naming the variable', (value) => {
    expect(() => loadConfig({ BATON_RUN_OUTPUT_LIMIT_MB: value })).toThrow(ConfigError);
    expect(() => loadConfig({ BATON_RUN_OUTPUT_LIMIT_MB: value })).toThrow(/BATON_RUN_OUTPUT_LIMIT_MB/);
  });
});
