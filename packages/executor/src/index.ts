export { checkoutCommit, DEFAULT_GIT_TIMEOUT_MS, GitError, type GitErrorCode, resolveBranchHead } from './git/git.js';
export {
  DEFAULT_MAX_LIST_BYTES, DEFAULT_PARSE_TIMEOUT_MS, detectInventoryFormat, InventoryParseError, InventorySourceError, parseInventory, runInventorySource,
  scriptJsonToYamlInventory, type SourceInventory, sourceInventoryFromList, summarizeInventoryList,
} from './inventory/ansible-inventory.js';
export { fetchInventoryUrl, type FetchInventoryUrlOptions, isRefusedAddress, loadUrlInventory } from './inventory/inventory-url.js';
export { type HostStats, type RunConclusion, type RunOutcome, type RunPlaybookOptions, type RunReason, runPlaybook } from './playbook/run-playbook.js';
