// Git URL and branch rules as plain functions, without zod: the executor process checks URLs and branches with these
// and loads no schema (zod and the schemas are a large share of a Node process's memory).
import { tryParseUrl } from '../network/safe-url.js';

/**
 * Why a git URL is refused, or undefined when git may be pointed at it. Shared by request validation and the
 * executor, so both refuse the same URLs: only https, ssh (also scp-like `user@host:path`), git and file
 * transports; never a remote helper (`ext::…`, `fd::…`), a bare local path, or a password inside the URL.
 */
export function gitUrlProblem(url: string): string | undefined {
  if (url.length === 0 || url.length > 2048) return 'must be 1 to 2048 characters';
  // eslint-disable-next-line no-control-regex -- control characters and spaces have no place in a URL git will parse
  if (/[\s\u0000-\u001f\u007f]/.test(url)) return 'must not contain spaces or control characters';
  if (url.startsWith('-')) return 'must not start with "-"';
  // git reads `<transport>::<address>` as a remote helper only when the text before `::` is all scheme
  // characters, so an IPv6 literal such as ssh://git@[2001:db8::1]/repo stays allowed.
  if (/^[A-Za-z0-9+.-]+::/.test(url))
    return 'remote helpers such as ext:: and fd:: are not allowed; use an https, ssh, git or file URL';
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1];
  if (scheme === undefined) {
    // git reads `[user@]host:path` (a colon before any slash) as ssh.
    const scp = /^(?:([A-Za-z0-9._~-]+)@)?([A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Fa-f:.]+\]):(.+)$/.exec(url);
    if (!scp)
      return 'must be an https://, ssh://, git:// or file:/// URL or scp-like user@host:path (local paths need file://)';
    return undefined;
  }
  if (!['https', 'ssh', 'git', 'file'].includes(scheme))
    return `the ${scheme}:// protocol is not allowed; use https, ssh, git or file`;
  const parsed = tryParseUrl(url);
  if (!parsed) return 'is not a valid URL';
  if (parsed.password) return 'must not carry a password; attach a credential instead';
  if (scheme === 'file')
    return parsed.host === '' && parsed.pathname.length > 1 ? undefined : 'a file URL must be file:///absolute/path';
  if (parsed.hostname === '' || parsed.hostname.startsWith('-') || parsed.username.startsWith('-'))
    return 'must name a host';
  return undefined;
}

/** A branch name git accepts (the rules of git check-ref-format, for one branch). */
export function branchNameProblem(name: string): string | undefined {
  if (name.length === 0 || name.length > 255) return 'must be 1 to 255 characters';
  if (name.startsWith('-')) return 'must not start with "-"';
  // eslint-disable-next-line no-control-regex -- git refuses control characters, spaces and these in ref names
  if (/[\s\u0000-\u001f\u007f~^:?*[\\]/.test(name))
    return 'must not contain spaces, control characters or any of ~ ^ : ? * [ \\';
  if (name.includes('..') || name.includes('@{') || name === '@') return 'must not contain "..", "@{" or be "@"';
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//'))
    return 'must not start or end with "/" or contain "//"';
  if (name.endsWith('.') || name.split('/').some((part) => part.startsWith('.') || part.endsWith('.lock'))) {
    return 'no part may start with "." or end with ".lock", and the name must not end with "."';
  }
  return undefined;
}
