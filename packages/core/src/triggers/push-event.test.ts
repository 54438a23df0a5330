import { describe, expect, it } from '@jest/globals';
import {
  classifyEvent,
  deliveryEvent,
  deliveryId,
  isPushedRepository,
  parsePush,
  repositoryKey,
} from './push-event.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const ZERO = '0'.repeat(40);

describe('push payloads', () => {
  it('reads a GitHub/Gitea push of a branch', () => {
    const push = parsePush({
      ref: 'refs/heads/release/1.2',
      before: B,
      after: A.toUpperCase(),
      repository: {
        full_name: 'ops/site',
        clone_url: 'https://git.example.com/ops/site.git',
        ssh_url: 'git@git.example.com:ops/site.git',
        html_url: 'https://git.example.com/ops/site',
      },
    });
    expect(push).toEqual({
      kind: 'push',
      ref: 'refs/heads/release/1.2',
      name: 'release/1.2',
      commit: A,
      after: A,
      deleted: false,
      repository: {
        fullName: 'ops/site',
        urls: [
          'https://git.example.com/ops/site.git',
          'git@git.example.com:ops/site.git',
          'https://git.example.com/ops/site',
        ],
      },
    });
  });

  it('reads a GitLab tag push: the commit is checkout_sha, not the tag object', () => {
    const push = parsePush({
      object_kind: 'tag_push',
      ref: 'refs/tags/v1.0',
      after: B,
      checkout_sha: A,
      project: {
        path_with_namespace: 'group/sub/site',
        git_http_url: 'https://gitlab.example.com/group/sub/site.git',
        git_ssh_url: 'git@gitlab.example.com:group/sub/site.git',
      },
    });
    expect(push).toMatchObject({ kind: 'tag_push', name: 'v1.0', commit: A, after: B, deleted: false });
    expect(push).toMatchObject({ repository: { fullName: 'group/sub/site' } });
  });

  it('sees deletions', () => {
    expect(parsePush({ ref: 'refs/heads/x', after: ZERO })).toMatchObject({ deleted: true, kind: 'push' });
    expect(parsePush({ ref: 'refs/tags/v1', after: ZERO, checkout_sha: null })).toMatchObject({
      deleted: true,
      kind: 'tag_push',
    });
  });

  it('names the field at fault of what is not a push', () => {
    expect(parsePush([])).toEqual({ field: 'body', message: expect.any(String) });
    expect(parsePush({ after: A })).toMatchObject({ field: 'body.ref' });
    expect(parsePush({ ref: 'refs/heads/main' })).toMatchObject({ field: 'body.after' });
    expect(parsePush({ ref: 'refs/heads/main', after: 'abc' })).toMatchObject({ field: 'body.after' });
    expect(parsePush({ ref: 'refs/notes/x', after: A })).toMatchObject({ field: 'body.ref' });
    expect(parsePush({ ref: 42, after: A })).toMatchObject({ field: 'body.ref' });
  });

  it('reads the event and delivery headers of each forge', () => {
    expect(deliveryEvent({ 'x-github-event': 'push' })).toBe('push');
    expect(deliveryEvent({ 'x-gitea-event': 'push', 'x-github-event': 'ping' })).toBe('push');
    expect(deliveryEvent({ 'x-gitlab-event': 'Tag Push Hook' })).toBe('Tag Push Hook');
    expect(deliveryEvent({})).toBeUndefined();
    expect(classifyEvent('Push Hook')).toBe('push');
    expect(classifyEvent('Tag Push Hook')).toBe('push');
    expect(classifyEvent('ping')).toBe('ping');
    expect(classifyEvent('pull_request')).toBe('other');
    expect(classifyEvent(undefined)).toBe('push');
    expect(deliveryId({ 'x-github-delivery': 'g1' })).toBe('g1');
    expect(deliveryId({ 'x-gitea-delivery': 't1', 'x-github-delivery': 'g1' })).toBe('t1');
    expect(deliveryId({ 'x-gitlab-event-uuid': 'l1' })).toBe('l1');
    expect(deliveryId({ 'x-baton-delivery': 'b1' })).toBe('b1');
    expect(deliveryId({ 'x-github-delivery': '  ' })).toBeUndefined();
  });
});

describe('repository matching', () => {
  it('reduces URLs to host and path', () => {
    const key = { host: 'git.example.com', path: '/ops/site' };
    for (const url of [
      'https://git.example.com/ops/site.git',
      'https://Git.Example.COM/ops/site/',
      'https://user@git.example.com:8443/ops/site.git/',
      'git@git.example.com:ops/site.git',
      'ssh://git@git.example.com:2222/ops/site',
      'git://git.example.com/ops/site.git',
    ])
      expect(repositoryKey(url)).toEqual(key);
    expect(repositoryKey('file:///srv/git/site.git')).toEqual({ host: '', path: '/srv/git/site' });
    expect(repositoryKey('not a url')).toBeUndefined();
  });

  it('matches by any URL or by full name, and keeps the path’s case', () => {
    const repo = {
      urls: ['https://git.example.com/ops/site.git', 'git@git.example.com:ops/site.git'],
      fullName: 'ops/site',
    };
    expect(isPushedRepository('ssh://git@GIT.example.com/ops/site', repo)).toBe(true);
    expect(isPushedRepository('https://mirror.internal/ops/site.git', repo)).toBe(true);
    expect(isPushedRepository('https://git.example.com/ops/other.git', repo)).toBe(false);
    expect(isPushedRepository('https://git.example.com/OPS/site.git', repo)).toBe(false);
    expect(isPushedRepository('https://elsewhere.example.com/x/ops/site.git', repo)).toBe(false);
    expect(isPushedRepository('file:///srv/site.git', { urls: ['file:///srv/site.git'], fullName: undefined })).toBe(
      true,
    );
    expect(isPushedRepository('file:///srv/site.git', { urls: [], fullName: undefined })).toBe(false);
  });
});
