import { describe, expect, it } from '@jest/globals';
import { gitUrlProblem } from './git-names.js';

describe('gitUrlProblem', () => {
  it.each([
    'ssh://git@[2001:db8::1]/ops.git',
    'git@[::1]:ops.git',
    'https://git.example.com/ops.git',
    'git@github.com:org/ops.git',
    'file:///srv/git/ops',
  ])('allows %s', (url) => expect(gitUrlProblem(url)).toBeUndefined());
  it.each([
    ['ext::sh%20-c%20touch', /remote helpers/],
    ['fd::3', /remote helpers/],
    ['http://git.example.com/ops.git', /http:\/\/ protocol is not allowed/],
    ['https://user:pw@git.example.com/ops.git', /password/],
    ['/srv/git/ops', /local paths need file/],
    ['-oProxyCommand=x', /must not start/],
  ])('refuses %s', (url, why) => expect(gitUrlProblem(url)).toMatch(why));
});
