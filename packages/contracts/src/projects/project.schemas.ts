import { z } from 'zod';
import { tryParseUrl } from '../network/safe-url.js';
import { checkedBy, idOf, Timestamp, ObjectName } from '../common/common.schemas.js';
import { HostKeyChecking } from '../known-hosts/known-host.schemas.js';

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

export const GitUrl = z
  .string()
  .superRefine(checkedBy(gitUrlProblem))
  .meta({ example: 'https://git.example.com/ops/playbooks.git' });
export const GitBranch = z.string().superRefine(checkedBy(branchNameProblem)).meta({ example: 'main' });
const ProjectName = ObjectName;

export const ProjectCreateBody = z.strictObject({
  name: ProjectName,
  git_url: GitUrl,
  branch: GitBranch.default('main'),
  credential_id: idOf('cred')
    .optional()
    .meta({ description: 'a token or ssh_key credential the server uses to reach the repository' }),
  galaxy_credential_id: idOf('cred')
    .optional()
    .meta({ description: 'a galaxy credential: the Galaxy or Automation Hub server its requirements install from' }),
  host_key_checking: HostKeyChecking.default('accept_new').meta({
    description: 'how git over SSH checks the git server’s host key (GET …/known-hosts lists it)',
  }),
});
export type ProjectCreateBody = z.infer<typeof ProjectCreateBody>;

export const ProjectUpdateBody = z
  .strictObject({
    name: ProjectName.optional(),
    git_url: GitUrl.optional(),
    branch: GitBranch.optional(),
    credential_id: idOf('cred').nullable().optional().meta({ description: 'null detaches the credential' }),
    galaxy_credential_id: idOf('cred').nullable().optional().meta({ description: 'null detaches it' }),
    host_key_checking: HostKeyChecking.optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), {
    message: 'give at least one of name, git_url, branch, credential_id, galaxy_credential_id, host_key_checking',
  });
export type ProjectUpdateBody = z.infer<typeof ProjectUpdateBody>;

export const Project = z
  .object({
    id: z.string(),
    name: z.string(),
    git_url: z.string(),
    branch: z.string(),
    credential_id: z.string().nullable(),
    galaxy_credential_id: z.string().nullable(),
    host_key_checking: HostKeyChecking,
    last_commit: z
      .string()
      .nullable()
      .meta({ description: 'head of the branch at the last sync; runs from this project use it' }),
    synced_at: Timestamp.nullable(),
    created_by: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Project' });

/** A requirements file found at the synced commit, with what ansible-galaxy will install from it. */
export const ProjectRequirements = z
  .object({
    path: z.string().meta({ example: 'collections/requirements.yml' }),
    roles: z.array(z.string()).meta({ description: 'role names or sources' }),
    collections: z.array(z.string()).meta({ description: 'collection names or sources' }),
    problem: z.string().optional().meta({ description: 'why the file could not be read (the run will fail on it)' }),
  })
  .meta({ id: 'ProjectRequirements' });
export type ProjectRequirements = z.infer<typeof ProjectRequirements>;

/** What a sync answers: the project, and the Galaxy requirements of the commit it now points at. */
export const ProjectSyncResult = z
  .object({
    ...Project.shape,
    requirements: z.array(ProjectRequirements).meta({ description: 'empty when the commit has none' }),
  })
  .meta({ id: 'ProjectSyncResult' });

export const ProjectIdParams = z.strictObject({ id: idOf('prj') });

/** How the server authenticates to a git remote: never put in a URL, argv or a file. */
export type GitAuth =
  | { kind: 'token'; token: string; username?: string | undefined }
  | { kind: 'ssh_key'; privateKey: string; passphrase?: string | undefined };
