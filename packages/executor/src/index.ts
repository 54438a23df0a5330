export { checkoutCommit, DEFAULT_GIT_TIMEOUT_MS, GitError, type GitErrorCode, resolveBranchHead } from './git/git.js';
export {
  DEFAULT_MAX_LIST_BYTES,
  DEFAULT_PARSE_TIMEOUT_MS,
  detectInventoryFormat,
  InventoryParseError,
  InventorySourceError,
  parseInventory,
  runInventorySource,
  scriptJsonToYamlInventory,
  type SourceInventory,
  sourceInventoryFromList,
  summarizeInventoryList,
} from './inventory/ansible-inventory.js';
export { fetchInventoryUrl, type FetchInventoryUrlOptions, loadUrlInventory } from './inventory/inventory-url.js';
export {
  DEFAULT_MAX_EVENT_RES_BYTES,
  DEFAULT_MAX_LOG_BYTES,
  type HostStats,
  type RunConclusion,
  type RunOutcome,
  type RunPlaybookOptions,
  type RunReason,
  runPlaybook,
  ShutdownAbort,
  WorkerLostAbort,
} from './playbook/run-playbook.js';
export { cleanupLeftoverRuns } from './playbook/run-leftovers.js';
export { createWarmLaunches, type WarmLaunches, type WarmLaunchesOptions } from './playbook/run-launch.js';
export { pruneRequirementsCache } from './playbook/requirements-cache.js';
export {
  probeBwrap,
  resolveSandboxMode,
  type Sandbox,
  SANDBOX_SETTINGS,
  sandboxed,
  type SandboxMode,
  type SandboxProbe,
  type SandboxSetting,
  type SandboxSpec,
  SandboxUnavailableError,
} from './sandbox/sandbox.js';
export { RUN_PRIORITIES, type RunPriority } from './playbook/run-process.js';
export {
  normalizePlaybookPath,
  type PlaybookAtBranch,
  type PlaybookEntry,
  resolvePlaybookAtBranch,
} from './git/playbook-lookup.js';
export {
  HostPatternError,
  hostLimitProblem,
  inventoryForHosts,
  type InventoryHosts,
  inventoryHosts,
} from './inventory/inventory-shards.js';
export {
  BUNDLE_LIFETIME_MS,
  openBundle,
  type OpenedBundle,
  openSealedBundle,
  parseWorkerKey,
  SealedBundleError,
  SealedBundleExpiredError,
  sealBundle,
  type SealOptions,
} from './bundle/sealed-bundle.js';
export { readRequirementsAtCommit, type RequirementsAtCommit } from './git/requirements-lookup.js';
export type { HostTrust } from './known-hosts/host-trust.js';
export {
  type Address,
  checkedFetchAddress,
  type FetchPolicy,
  gitRemoteOf,
  type Resolve,
} from './network/fetch-destination.js';
export { keyFromEnvOrFile, readKeyFile } from './keys/key-file.js';
