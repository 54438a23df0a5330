// Which environment variable names an `env` credential may not set, and why. Refused at create and update (a
// 400 naming the variable and the reason) and skipped by the executor for credentials stored before a name was
// refused. Names are case-sensitive (the loader ignores ld_preload), except Baton's own BATON_*.

/** Environment variable names: shell-style, and none of the names below, which are kept for the executor. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface EnvNameRule {
  why: string;
  names?: readonly string[];
  pattern?: RegExp;
}

const RULES: readonly EnvNameRule[] = [
  { why: "BATON_* is Baton's own namespace", pattern: /^BATON_/i },
  {
    // Our empty ansible.cfg, the baton_events callback and the default stdout callback are how a run is
    // recorded: a config file, another callback list or plugin directory could switch them off or replace them.
    why: 'it changes which configuration, callbacks or plugins ansible loads, and Baton records the run through its own',
    names: ['ANSIBLE_CONFIG', 'ANSIBLE_HOME', 'ANSIBLE_STDOUT_CALLBACK', 'ANSIBLE_VARS_ENABLED'],
    pattern: /^ANSIBLE_(?:CALLBACKS?_\w+|\w+_PLUGINS?|\w+_PLUGIN_PATHS?)$/,
  },
  {
    // A credential is shared with `use`; it must not change what code the projects it runs with execute. Roles
    // count: a role brings tasks and, in its library/ and *_plugins/ directories, modules and plugins. A project
    // keeps its own in roles/, collections/ and library/ beside the playbook, which ansible searches anyway.
    why: 'it changes where ansible loads modules, roles, collections or plugins from; a project brings its own beside its playbook',
    names: [
      'ANSIBLE_LIBRARY',
      'ANSIBLE_MODULE_UTILS',
      'ANSIBLE_ROLES_PATH',
      'ANSIBLE_COLLECTIONS_PATH',
      'ANSIBLE_COLLECTIONS_PATHS',
      'ANSIBLE_COLLECTIONS_SCAN_SYS_PATH',
    ],
  },
  {
    // ARCHITECTURE.md, "Executing ansible-playbook": the run's ssh-agent, private control sockets, home and temp
    // directories, and the settings every run gets. (ANSIBLE_SSH_CONTROL_PATH would override the private directory.)
    why: 'Baton sets it for every run (its ssh-agent, private control sockets, home and temp directories, interpreter and locale)',
    names: [
      'SSH_AUTH_SOCK',
      'SSH_AGENT_PID',
      'ANSIBLE_SSH_CONTROL_PATH_DIR',
      'ANSIBLE_SSH_CONTROL_PATH',
      'ANSIBLE_PERSISTENT_CONTROL_PATH_DIR',
      'ANSIBLE_PIPELINING',
      'ANSIBLE_RETRY_FILES_ENABLED',
      'ANSIBLE_NOCOLOR',
      'ANSIBLE_LOCAL_TEMP',
      'ANSIBLE_HOST_KEY_CHECKING',
      'ANSIBLE_SSH_COMMON_ARGS',
      'ANSIBLE_INVENTORY_UNPARSED_FAILED',
      'ANSIBLE_INVENTORY_ENABLED',
      'ANSIBLE_PYTHON_INTERPRETER',
      'PATH',
      'HOME',
      'TMPDIR',
      'LANG',
      'LC_ALL',
    ],
  },
  {
    why: 'it makes ssh, git or ansible run a program or load a library of its choosing (askpass, ssh or proxy command, git config)',
    names: [
      'SSH_ASKPASS',
      'SSH_ASKPASS_REQUIRE',
      'SSH_SK_PROVIDER',
      'SSH_SK_HELPER',
      'XDG_CONFIG_HOME',
      'ANSIBLE_SSH_EXECUTABLE',
      'ANSIBLE_SCP_EXECUTABLE',
      'ANSIBLE_SFTP_EXECUTABLE',
      'ANSIBLE_PARAMIKO_PROXY_COMMAND',
      // Extra ssh/scp/sftp options can carry `-o ProxyCommand=…` (runs a local program) or `-o ControlPath=…`
      // (leaves the run's private control-socket directory), as ANSIBLE_SSH_COMMON_ARGS could. Jump hosts and other
      // per-host options stay possible as inventory variables (ansible_ssh_extra_args), owned by the inventory.
      'ANSIBLE_SSH_ARGS',
      'ANSIBLE_SSH_EXTRA_ARGS',
      'ANSIBLE_SCP_EXTRA_ARGS',
      'ANSIBLE_SFTP_EXTRA_ARGS',
    ],
    // All of git's own: GIT_SSH, GIT_SSH_COMMAND, GIT_ASKPASS, GIT_EXEC_PATH, GIT_CONFIG_* (core.sshCommand,
    // core.fsmonitor run programs), GIT_TEMPLATE_DIR (hooks), GIT_TRACE=/path (writes files)…
    pattern: /^GIT_/,
  },
  {
    // An executable password file is run as a program; the vault_password and become_password credentials exist.
    why: 'it points ansible at a password file or script; use a vault_password or become_password credential',
    names: [
      'ANSIBLE_VAULT_PASSWORD_FILE',
      'ANSIBLE_VAULT_IDENTITY_LIST',
      'ANSIBLE_BECOME_PASSWORD_FILE',
      'ANSIBLE_CONNECTION_PASSWORD_FILE',
    ],
  },
  { why: "it makes ansible write the run's log to a file; the run's log is Baton's", names: ['ANSIBLE_LOG_PATH'] },
  {
    // Which programs run and which libraries they load stay the server's choice: the dynamic loader, glibc, the
    // shells and interpreters read these to load code or files (LD_AUDIT=./x.so would run a project's library).
    why: 'the dynamic loader, the shell or an interpreter reads it to load code or files',
    names: [
      'GCONV_PATH',
      'GLIBC_TUNABLES',
      'LOCPATH',
      'NLSPATH',
      'HOSTALIASES',
      'RES_OPTIONS',
      'BASH_ENV',
      'ENV',
      'SHELLOPTS',
      'BASHOPTS',
      'PS4',
      'IFS',
      'PROMPT_COMMAND',
      'PERLLIB',
      'RUBYOPT',
      'RUBYLIB',
      'NODE_OPTIONS',
      'NODE_PATH',
      'JAVA_TOOL_OPTIONS',
      '_JAVA_OPTIONS',
      'JDK_JAVA_OPTIONS',
      'OPENSSL_CONF',
      'OPENSSL_ENGINES',
      'OPENSSL_MODULES',
    ],
    // The loader's LD_*, malloc's MALLOC_*, Python's PYTHON* (PYTHONPATH, PYTHONSTARTUP…), Perl's PERL5*, Lua's LUA_INIT/PATH/CPATH.
    pattern: /^(?:LD_|MALLOC_|PYTHON|PERL5|LUA_(?:INIT|PATH|CPATH))/,
  },
  // The shell that loads a run's variables refuses a non-numeric OPTIND (and stops there).
  { why: 'the shell that sets the variables of a run uses it', names: ['OPTIND'] },
];

const BY_NAME = new Map<string, string>(RULES.flatMap((r) => (r.names ?? []).map((n) => [n, r.why] as const)));

/** Why an `env` credential may not set this variable, or undefined when it may. */
export function reservedEnvNameReason(name: string): string | undefined {
  return BY_NAME.get(name) ?? RULES.find((r) => r.pattern?.test(name))?.why;
}

export const isReservedEnvName = (name: string): boolean => reservedEnvNameReason(name) !== undefined;
