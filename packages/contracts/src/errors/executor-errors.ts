// The errors the executor's seams throw at core (git, ansible-inventory). They live here, in the one package both
// import, so core matches them with instanceof while it never imports the executor; the executor re-exports them.

export type GitErrorCode =
  'refused_url' | 'bad_input' | 'branch_not_found' | 'ref_not_found' | 'bad_credential' | 'timeout' | 'git_failed';

/** Git (or ssh-add) refused: `reason` is git's own explanation, with every secret scrubbed out. */
export class GitError extends Error {
  override readonly name = 'GitError';
  constructor(
    readonly code: GitErrorCode,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** ansible refused the inventory (bad syntax, nothing parsed, too slow or too large to list). */
export class InventoryParseError extends Error {
  override readonly name = 'InventoryParseError';
}

/** ansible refused the `--limit` pattern, or the pattern would read hosts from a file on this server. */
export class HostPatternError extends Error {
  override readonly name = 'HostPatternError';
}
