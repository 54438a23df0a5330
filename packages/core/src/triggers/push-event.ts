// What a forge's delivery says: which event, and for a push, which ref moved to which commit of which repository.
// GitHub, Gitea (and Gogs, Forgejo) and GitLab payloads are understood; anything GitHub-shaped works.
import type { TriggerEvent } from '@baton/contracts';
import { headerOf, type HookHeaders } from './hook-signature.js';

/** The event a delivery announces, from the forge's header; `undefined` when it sent none (a plain script). */
export function deliveryEvent(headers: HookHeaders): string | undefined {
  for (const name of ['x-gitea-event', 'x-gogs-event', 'x-github-event', 'x-gitlab-event', 'x-baton-event']) {
    const v = headerOf(headers, name);
    if (v !== undefined) return v.trim();
  }
  return undefined;
}

/** The forge's id of this delivery (the same on a redelivery), if it sent one. */
export function deliveryId(headers: HookHeaders): string | undefined {
  for (const name of ['x-gitea-delivery', 'x-github-delivery', 'x-gitlab-event-uuid', 'x-baton-delivery']) {
    const v = headerOf(headers, name)?.trim();
    if (v) return v;
  }
  return undefined;
}

/** Event names (any forge) that announce a push of a branch or a tag. */
const PUSH_EVENTS = new Set(['push', 'push hook', 'tag push hook']);
/** Event names that only test the hook. */
const PING_EVENTS = new Set(['ping', 'system hook test']);

export type EventClass = 'push' | 'ping' | 'other';

/** A delivery without an event header counts as a push (a script posting a GitHub-shaped payload). */
export function classifyEvent(event: string | undefined): EventClass {
  if (event === undefined) return 'push';
  const e = event.toLowerCase();
  if (PUSH_EVENTS.has(e)) return 'push';
  return PING_EVENTS.has(e) ? 'ping' : 'other';
}

export interface PushEvent {
  /** branch push or tag push, from the ref */
  kind: TriggerEvent;
  /** the full ref, e.g. refs/heads/main */
  ref: string;
  /** the branch or tag name */
  name: string;
  /** the commit to run (lower-case hex): `after`, or for a tag the commit it points to */
  commit: string;
  /** `after` as sent */
  after: string;
  /** the ref was deleted (`after` all zeros) */
  deleted: boolean;
  /** the pushed repository: its URLs and its full name (owner/name, or a GitLab namespace path) */
  repository: { urls: string[]; fullName: string | undefined };
}

const SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const ZEROS = /^0+$/;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/** A push payload as a PushEvent, or the reason it is not one (the field at fault and what is wrong). */
export function parsePush(payload: unknown): PushEvent | { field: string; message: string } {
  const p = obj(payload);
  if (!p) return { field: 'body', message: 'a push payload is a JSON object' };
  const ref = str(p.ref);
  if (!ref) return { field: 'body.ref', message: 'a push payload names its ref (refs/heads/… or refs/tags/…)' };
  const after = str(p.after)?.toLowerCase();
  if (!after || !(SHA.test(after) || ZEROS.test(after)))
    return {
      field: 'body.after',
      message: 'a push payload gives the commit the ref moved to (after), as a full commit id',
    };
  const deleted = ZEROS.test(after) || p.deleted === true;
  const kind: TriggerEvent | undefined = ref.startsWith('refs/heads/')
    ? 'push'
    : ref.startsWith('refs/tags/')
      ? 'tag_push'
      : undefined;
  if (!kind) return { field: 'body.ref', message: `${ref} is neither a branch (refs/heads/…) nor a tag (refs/tags/…)` };
  const name = ref.slice(kind === 'push' ? 'refs/heads/'.length : 'refs/tags/'.length);
  // An annotated tag's `after` is the tag object: GitLab's checkout_sha and GitHub's head_commit are its commit.
  const peeled = kind === 'tag_push' ? (str(p.checkout_sha) ?? str(obj(p.head_commit)?.id))?.toLowerCase() : undefined;
  const commit = peeled && SHA.test(peeled) ? peeled : after;

  const repo = obj(p.repository) ?? {};
  const project = obj(p.project) ?? {};
  const urls = [
    repo.clone_url,
    repo.ssh_url,
    repo.html_url,
    repo.git_url,
    repo.git_http_url,
    repo.git_ssh_url,
    repo.url,
    repo.homepage,
    project.git_http_url,
    project.git_ssh_url,
    project.http_url,
    project.ssh_url,
    project.web_url,
  ].flatMap((u) => (str(u) ? [u as string] : []));
  const fullName = str(repo.full_name) ?? str(project.path_with_namespace) ?? str(p.project_path);
  return { kind, ref, name, commit, after, deleted, repository: { urls: [...new Set(urls)], fullName } };
}

/**
 * A repository address reduced to what identifies it: lower-case host (no user, no port) and path without a
 * trailing slash or `.git`. `https://Git.example.com/ops/site.git/`, `git@git.example.com:ops/site.git` and
 * `ssh://git@git.example.com:2222/ops/site` all give `git.example.com/ops/site`; a file URL gives its path.
 */
export function repositoryKey(url: string): { host: string; path: string } | undefined {
  let host: string;
  let path: string;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/.exec(url.trim());
  if (scheme) {
    const rest = scheme[2]!;
    const slash = rest.indexOf('/');
    const authority = slash < 0 ? rest : rest.slice(0, slash);
    path = slash < 0 ? '' : rest.slice(slash);
    host = authority.slice(authority.lastIndexOf('@') + 1).replace(/:\d*$/, '');
  } else {
    const scp = /^(?:[^@/]+@)?([^:/]+):(.+)$/.exec(url.trim());
    if (!scp) return undefined;
    host = scp[1]!;
    path = `/${scp[2]!}`;
  }
  path = path
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/i, '')
    .replace(/\/+$/, '');
  path = path.replace(/\/{2,}/g, '/');
  if (!path.startsWith('/')) path = `/${path}`;
  if (path === '/') return undefined;
  return { host: host.toLowerCase(), path };
}

/** Whether the project at `gitUrl` is the pushed repository: by any of its URLs, or by its full name. */
export function isPushedRepository(gitUrl: string, repository: PushEvent['repository']): boolean {
  const mine = repositoryKey(gitUrl);
  if (!mine) return false;
  for (const url of repository.urls) {
    const theirs = repositoryKey(url);
    if (theirs && theirs.host === mine.host && theirs.path === mine.path) return true;
  }
  const fullName = repository.fullName?.replace(/^\/+|\/+$/g, '').replace(/\.git$/i, '');
  return fullName !== undefined && fullName !== '' && mine.path === `/${fullName}`;
}
