// Host keys a run records, against a real sshd on loopback: accept_new keeps the key ssh met (as `[127.0.0.1]:port`),
// and a key the playbook planted in the run's known_hosts file for a host ssh never met is dropped (the host itself is
// asked again with ssh-keyscan); a changed key fails the host with reason `host key changed`.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { KnownHostEntry } from '@baton/contracts';
import { inlineBundle, play, runCollecting, sshKeyPair, startSshd, tempDir } from '../testing/index.js';
import { confirmedByHosts } from './host-trust.js';

const root = tempDir('baton-host-trust');
let sshd: { port: number; stop(): Promise<void> };
let client: { privateKey: string; publicKey: string };
let hostLine: string;
let planted: string;

beforeAll(async () => {
  client = sshKeyPair(root, 'client');
  const dir = path.join(root, 'sshd');
  fs.mkdirSync(dir);
  sshd = await startSshd(dir, [client.publicKey]);
  const [type, key] = fs.readFileSync(path.join(dir, 'host_ed25519.pub'), 'utf8').trim().split(/\s+/);
  hostLine = `[127.0.0.1]:${sshd.port} ${type} ${key}`;
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(root, 'planted')]);
  const [ptype, pkey] = fs.readFileSync(path.join(root, 'planted.pub'), 'utf8').trim().split(/\s+/);
  planted = `10.255.255.1 ${ptype} ${pkey}`;
});
afterAll(async () => {
  await sshd?.stop();
});

const bundleWith = (knownHosts: string) =>
  inlineBundle(
    play(
      [
        '    - ping:',
        '    # What a hostile playbook could do: add a key of its choosing to the file ssh records into.',
        `    - shell: echo '${planted}' >> "{{ lookup('env', 'TMPDIR') }}/../known_hosts"`,
        '      delegate_to: localhost',
        '      run_once: true',
        '',
      ].join('\n'),
    ),
    {
      inventory: {
        content: [
          // ansible_timeout: ssh's connect timeout (10 s by default) ran out once on a loaded CI machine, which made the host
          // unreachable for that reason instead of for its changed key.
          `target ansible_host=127.0.0.1 ansible_port=${sshd.port} ansible_user=root ansible_timeout=60 ansible_python_interpreter=/usr/bin/python3`,
          'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3',
          '',
        ].join('\n'),
        format: 'ini',
        host_keys: { checking: 'accept_new', known_hosts: knownHosts },
      },
      credentials: [{ type: 'ssh_key', inputs: { private_key: client.privateKey } }],
    },
  );

const reported = (events: Array<{ kind: string; data: Record<string, unknown> }>) => {
  const final = events.find((e) => e.kind === 'status' && e.data.status === 'finished')!;
  return (final.data.host_keys as { inventory: KnownHostEntry[] } | undefined)?.inventory ?? [];
};

describe('keys a run records', () => {
  it('keeps the key ssh met and drops one the playbook planted', async () => {
    const { outcome, events } = await runCollecting(bundleWith(''), { workRoot: root });
    expect(outcome.conclusion).toBe('succeeded');
    const [host, keyType, key] = hostLine.split(' ');
    expect(reported(events)).toEqual([{ host, key_type: keyType, key }]);
  });

  it('reports nothing new when the key was stored, and refuses a changed one', async () => {
    const known = await runCollecting(bundleWith(`${hostLine}\n`), { workRoot: root });
    expect(known.outcome.conclusion).toBe('succeeded');
    expect(reported(known.events)).toEqual([]);

    const [host, keyType] = hostLine.split(' ');
    const otherKey = planted.split(' ')[2];
    const changed = await runCollecting(bundleWith(`${host} ${keyType} ${otherKey}\n`), { workRoot: root });
    expect(changed.outcome.conclusion).toBe('failed');
    expect(changed.outcome.stats.target).toMatchObject({ unreachable: 1, reason: 'host key changed' });
    expect(reported(changed.events)).toEqual([]);
    // Two real runs over ssh: on a loaded CI machine they took more than Jest's 60 s once (a safety net, not a speed
    // threshold).
  }, 180_000);

  it('confirmedByHosts keeps only keys the hosts present', async () => {
    const [host, keyType, key] = hostLine.split(' ');
    const [phost, ptype, pkey] = planted.split(' ');
    const confirmed = await confirmedByHosts(
      [
        { host: host!, key_type: keyType as KnownHostEntry['key_type'], key: key! },
        { host: phost!, key_type: ptype as KnownHostEntry['key_type'], key: pkey! },
        { host: host!, key_type: 'ssh-ed25519', key: pkey! },
      ],
      { PATH: process.env.PATH },
    );
    expect(confirmed).toEqual([{ host, key_type: keyType, key }]);
  });
});
