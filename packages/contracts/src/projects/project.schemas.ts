import { z } from 'zod';
import { checkedBy, idOf, Timestamp, ObjectName } from '../common/common.schemas.js';
import { HostKeyChecking } from '../known-hosts/known-host.schemas.js';
import { branchNameProblem, gitUrlProblem } from './git-names.js';

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
