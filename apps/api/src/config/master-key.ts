import fs from 'node:fs';
import path from 'node:path';
import { generateMasterKey, Keyring, type MasterKey, parseMasterKey } from '@baton/core';
import { ConfigError } from './config.js';

export const MASTER_KEY_FILE = 'master.key';
/** Written before a rotation re-seals anything, renamed over master.key after: a crash in between loses nothing. */
export const NEXT_MASTER_KEY_FILE = 'master.key.next';

function readKeyFile(file: string): MasterKey {
  try {
    return parseMasterKey(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${file}: ${(err as Error).message}`);
  }
}

export function writeKeyFile(file: string, key: MasterKey): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${key.key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  fs.renameSync(tmp, file);
}

/**
 * The master keyring: BATON_MASTER_KEY (64 hex digits or base64 of 32 bytes; older keys may follow,
 * comma-separated, while values are being rotated), or `<data>/master.key`, generated once with mode 0600.
 */
export function loadKeyring(opts: { masterKey?: string | undefined; dataDir: string; create: boolean }): Keyring {
  if (opts.masterKey !== undefined) {
    const keys = opts.masterKey.split(',').map((part, i) => {
      try {
        return parseMasterKey(part);
      } catch (err) {
        throw new ConfigError(`BATON_MASTER_KEY${i ? ` (key ${i + 1})` : ''}: ${(err as Error).message}`);
      }
    });
    return new Keyring(keys[0]!, keys.slice(1));
  }
  const file = path.join(opts.dataDir, MASTER_KEY_FILE);
  const next = path.join(opts.dataDir, NEXT_MASTER_KEY_FILE);
  if (!fs.existsSync(file)) {
    if (!opts.create)
      throw new ConfigError(`no master key: set BATON_MASTER_KEY or start baton serve once to create ${file}`);
    writeKeyFile(file, generateMasterKey());
  }
  const current = readKeyFile(file);
  // A rotation that stopped half-way: values may be sealed under either key.
  const pending = fs.existsSync(next) ? [readKeyFile(next)] : [];
  return new Keyring(current, pending);
}
