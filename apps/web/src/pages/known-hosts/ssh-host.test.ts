// How the UI names a host the way ssh writes it in known_hosts: the address, [address]:port off port 22.
import { describe, expect, it } from '@jest/globals';
import { gitSshHost, inventoryNamesBySshHost, inventorySshHost, sshHostName } from './ssh-host';

describe('ssh host names', () => {
  it('brackets the address only for a port other than 22', () => {
    expect(sshHostName('10.0.0.1')).toBe('10.0.0.1');
    expect(sshHostName('10.0.0.1', 22)).toBe('10.0.0.1');
    expect(sshHostName('10.0.0.1', '2222')).toBe('[10.0.0.1]:2222');
    expect(sshHostName('[::1]', 2200)).toBe('[::1]:2200');
    expect(sshHostName('[::1]')).toBe('::1');
  });

  it('names an inventory host by its ansible_host and ansible_port, else by its name', () => {
    expect(inventorySshHost('web1', { ansible_host: '10.0.0.11' })).toBe('10.0.0.11');
    expect(inventorySshHost('web1', { ansible_host: '10.0.0.11', ansible_port: 2222 })).toBe('[10.0.0.11]:2222');
    expect(inventorySshHost('web1', { ansible_ssh_host: 'w1.example.com' })).toBe('w1.example.com');
    expect(inventorySshHost('web1', undefined)).toBe('web1');
    const byHost = inventoryNamesBySshHost(['b', 'a', 'c', 'a'], {
      a: { ansible_host: '10.0.0.1' },
      b: { ansible_host: '10.0.0.1' },
    });
    expect([...byHost]).toEqual([
      ['10.0.0.1', ['a', 'b']],
      ['c', ['c']],
    ]);
  });

  it('finds the git server of SSH URLs only', () => {
    expect(gitSshHost('ssh://git@git.example.com/org/repo.git')).toBe('git.example.com');
    expect(gitSshHost('ssh://git@git.example.com:2222/org/repo.git')).toBe('[git.example.com]:2222');
    expect(gitSshHost('ssh://root@10.123.4.2/var/tmp/repo')).toBe('10.123.4.2');
    expect(gitSshHost('git+ssh://[::1]:2200/repo')).toBe('[::1]:2200');
    expect(gitSshHost('git@github.com:org/repo.git')).toBe('github.com');
    expect(gitSshHost('github.com:org/repo.git')).toBe('github.com');
    expect(gitSshHost('https://github.com/org/repo.git')).toBeUndefined();
    expect(gitSshHost('file:///srv/git/repo.git')).toBeUndefined();
    expect(gitSshHost('/srv/git/repo.git')).toBeUndefined();
  });
});
