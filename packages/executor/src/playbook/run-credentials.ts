// A run's credentials, kept off disk: an ssh key into an ssh-agent the run owns, become and vault passwords
// through FIFOs served once, env variables only into ansible's own environment (through a FIFO as well).
import path from 'node:path';
import { type BundleCredential, ENV_NAME_PATTERN, isReservedEnvName } from '@baton/contracts';
import { GitError, startOwnedSshAgent, type OwnedSshAgent } from '../git/git.js';
import { RunRefused } from './run-conclusion.js';
import type { RunPids } from './run-leftovers.js';
import { type SecretFifo, serveSecretThroughFifo } from './secret-fifo.js';

/** What a run's credentials hold open until the run is cleaned up. */
export interface RunResources {
  agent?: OwnedSshAgent | undefined;
  fifos: SecretFifo[];
  /** records a pid in the run's pids.json as soon as it is known */
  recordPids: (pids: Partial<RunPids>) => void;
}

/** Serves one secret through a new FIFO of the run and answers its path. */
export type FifoServer = (stem: string, secret: string) => Promise<string>;

/** Names the credential FIFOs of a run: one per secret, each served once. */
export function fifoServer(dir: string, res: RunResources): FifoServer {
  let count = 0;
  return async (stem: string, secret: string) => {
    const served = await serveSecretThroughFifo(path.join(dir, `${stem}-${++count}.fifo`), secret);
    res.fifos.push(served);
    return served.path;
  };
}

export interface PreparedCredentials {
  args: string[];
  /** variables of Baton's own for ansible (the agent's socket) */
  env: NodeJS.ProcessEnv;
  /** the env credentials' variables, which only the command inside the sandbox (or ansible) may see */
  variables: Record<string, string>;
}

export async function prepareCredentials(
  dir: string,
  credentials: BundleCredential[],
  baseEnv: NodeJS.ProcessEnv,
  res: RunResources,
  fifo: FifoServer,
): Promise<PreparedCredentials> {
  const args: string[] = [];
  const env: NodeJS.ProcessEnv = {};
  const variables: Record<string, string> = {};
  for (const c of credentials) {
    switch (c.type) {
      case 'ssh_key':
        // One machine credential per run: a second key would only be offered after the first by the agent.
        if (res.agent) break;
        try {
          res.agent = await startOwnedSshAgent({
            dir,
            env: baseEnv,
            privateKey: c.inputs.private_key,
            passphrase: c.inputs.passphrase,
          });
        } catch (err) {
          if (err instanceof GitError) throw new RunRefused('error', 'bad_credential', `baton: ${err.reason}`);
          throw err;
        }
        res.recordPids({ agent_pid: res.agent.pid });
        env.SSH_AUTH_SOCK = res.agent.socket;
        if (c.inputs.username) args.push('--user', c.inputs.username);
        break;
      case 'become_password':
        args.push('--become-password-file', await fifo('become', c.inputs.password));
        if (c.inputs.method) args.push('--become-method', c.inputs.method);
        if (c.inputs.user) args.push('--become-user', c.inputs.user);
        break;
      case 'vault_password': {
        const file = await fifo('vault', c.inputs.password);
        if (c.inputs.vault_id) args.push('--vault-id', `${c.inputs.vault_id}@${file}`);
        else args.push('--vault-password-file', file);
        break;
      }
      case 'env':
        Object.assign(variables, c.inputs.variables);
        break;
    }
  }
  return { args, env, variables };
}

/**
 * The credential variables a run may set, each refused one named in the log (never its value): a name that is
 * no shell name, a reserved one (LD_AUDIT, PYTHONPATH… : stored before they were refused at create, or sent
 * by a forged bundle), one Baton sets itself for the run, or a value that no environment can hold.
 */
export function acceptedVariables(
  variables: Record<string, string>,
  own: NodeJS.ProcessEnv,
  notice: (line: string) => void,
): Record<string, string> {
  const accepted: Record<string, string> = {};
  for (const [name, value] of Object.entries(variables)) {
    const why = !ENV_NAME_PATTERN.test(name)
      ? 'not a variable name'
      : isReservedEnvName(name)
        ? 'the name is reserved'
        : Object.hasOwn(own, name)
          ? 'Baton sets it for every run'
          : value.includes('\0')
            ? 'its value holds a NUL character'
            : undefined;
    if (why)
      notice(
        `baton: the env credential variable ${ENV_NAME_PATTERN.test(name) ? name : JSON.stringify(name.slice(0, 128))} was not set: ${why}`,
      );
    else accepted[name] = value;
  }
  return accepted;
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Starts `command` with the credential variables in its environment, and with them nowhere else: not in argv
 * (anyone reads /proc/<pid>/cmdline), not on disk, not in the environment of the processes around it (perl,
 * /bin/sh, bwrap run outside the sandbox, and the dynamic loader of each would honour LD_AUDIT=./x.so from the
 * project's checkout). A FIFO serves `export NAME='value'` lines once to this launcher, which runs with the
 * run's base environment, sources them and execs the command.
 */
const ENV_LAUNCHER = '. "$1"; shift; exec "$@"';

/** `command` itself, or the launcher around it when the run has credential variables to set. */
export async function withVariables(
  command: string,
  args: string[],
  variables: Record<string, string>,
  fifo: FifoServer,
): Promise<{ command: string; args: string[] }> {
  if (Object.keys(variables).length === 0) return { command, args };
  const exports = Object.entries(variables)
    .map(([name, value]) => `export ${name}=${shellQuote(value)}\n`)
    .join('');
  return { command: '/bin/sh', args: ['-c', ENV_LAUNCHER, 'baton-env', await fifo('env', exports), command, ...args] };
}
