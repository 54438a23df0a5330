import { describe, expect, it } from '@jest/globals';
import { CredentialCreateBody, isReservedEnvName, reservedEnvNameReason } from './credential.schemas.js';

const envBody = (variables: Record<string, string>) => ({ name: 'env', type: 'env', inputs: { variables } });

describe('env credential names', () => {
  // Each of these makes the dynamic loader, glibc, a shell or an interpreter load code or files of the caller's choice.
  it.each([
    'LD_AUDIT',
    'LD_PRELOAD',
    'LD_LIBRARY_PATH',
    'LD_DEBUG_OUTPUT',
    'GCONV_PATH',
    'GLIBC_TUNABLES',
    'MALLOC_CHECK_',
    'MALLOC_ARENA_MAX',
    'LOCPATH',
    'NLSPATH',
    'HOSTALIASES',
    'RES_OPTIONS',
    'BASH_ENV',
    'ENV',
    'HOME',
    'TMPDIR',
    'PYTHONPATH',
    'PYTHONSTARTUP',
    'PYTHONHOME',
    'PERL5LIB',
    'PERL5OPT',
    'RUBYOPT',
    'NODE_OPTIONS',
    'OPTIND',
    'PATH',
    'SSH_AUTH_SOCK',
    'BATON_X',
    'baton_x',
  ])('refuses %s at create, naming the variable', (name) => {
    expect(isReservedEnvName(name)).toBe(true);
    const parsed = CredentialCreateBody.safeParse(envBody({ [name]: './audit.so', FINE: 'x' }));
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues).toEqual([
      expect.objectContaining({ path: ['inputs', 'variables', name], message: expect.stringContaining('reserved') }),
    ]);
  });

  // Each of these changes which config, callbacks or plugins ansible loads, where it loads code from, a setting
  // Baton owns for every run, or makes ssh or git run a program: the run engine and the run's isolation depend on them.
  it.each<[string, string]>([
    ['ANSIBLE_CONFIG', 'configuration, callbacks or plugins'],
    ['ANSIBLE_HOME', 'configuration, callbacks or plugins'],
    ['ANSIBLE_CALLBACK_PLUGINS', 'configuration, callbacks or plugins'],
    ['ANSIBLE_CALLBACKS_ENABLED', 'configuration, callbacks or plugins'],
    ['ANSIBLE_CALLBACK_WHITELIST', 'configuration, callbacks or plugins'],
    ['ANSIBLE_CALLBACK_RESULT_FORMAT', 'configuration, callbacks or plugins'],
    ['ANSIBLE_STDOUT_CALLBACK', 'configuration, callbacks or plugins'],
    ['ANSIBLE_LOAD_CALLBACK_PLUGINS', 'configuration, callbacks or plugins'],
    ['ANSIBLE_STRATEGY_PLUGINS', 'configuration, callbacks or plugins'],
    ['ANSIBLE_ACTION_PLUGINS', 'configuration, callbacks or plugins'],
    ['ANSIBLE_CONNECTION_PLUGINS', 'configuration, callbacks or plugins'],
    ['ANSIBLE_VARS_PLUGINS', 'configuration, callbacks or plugins'],
    ['ANSIBLE_DOC_FRAGMENT_PLUGINS', 'configuration, callbacks or plugins'],
    ['ANSIBLE_CACHE_PLUGIN', 'configuration, callbacks or plugins'],
    ['ANSIBLE_FILTER_PLUGIN_PATH', 'configuration, callbacks or plugins'],
    ['ANSIBLE_LOOKUP_PLUGIN_PATHS', 'configuration, callbacks or plugins'],
    ['ANSIBLE_VARS_ENABLED', 'configuration, callbacks or plugins'],
    ['ANSIBLE_LIBRARY', 'loads modules, roles, collections or plugins from'],
    ['ANSIBLE_MODULE_UTILS', 'loads modules, roles, collections or plugins from'],
    ['ANSIBLE_COLLECTIONS_PATH', 'loads modules, roles, collections or plugins from'],
    ['ANSIBLE_COLLECTIONS_PATHS', 'loads modules, roles, collections or plugins from'],
    ['ANSIBLE_ROLES_PATH', 'loads modules, roles, collections or plugins from'],
    ['ANSIBLE_PYTHON_INTERPRETER', 'Baton sets it for every run'],
    ['ANSIBLE_SSH_CONTROL_PATH', 'Baton sets it for every run'],
    ['ANSIBLE_SSH_CONTROL_PATH_DIR', 'Baton sets it for every run'],
    ['ANSIBLE_INVENTORY_ENABLED', 'Baton sets it for every run'],
    ['SSH_AUTH_SOCK', 'Baton sets it for every run'],
    ['LC_ALL', 'Baton sets it for every run'],
    ['SSH_ASKPASS', 'run a program'],
    ['SSH_ASKPASS_REQUIRE', 'run a program'],
    ['SSH_SK_PROVIDER', 'run a program'],
    ['GIT_SSH', 'run a program'],
    ['GIT_SSH_COMMAND', 'run a program'],
    ['GIT_ASKPASS', 'run a program'],
    ['GIT_CONFIG_GLOBAL', 'run a program'],
    ['GIT_CONFIG_COUNT', 'run a program'],
    ['GIT_CONFIG_PARAMETERS', 'run a program'],
    ['GIT_EXEC_PATH', 'run a program'],
    ['GIT_TEMPLATE_DIR', 'run a program'],
    ['XDG_CONFIG_HOME', 'run a program'],
    ['ANSIBLE_SSH_EXECUTABLE', 'run a program'],
    ['ANSIBLE_SSH_ARGS', 'run a program'],
    ['ANSIBLE_SSH_EXTRA_ARGS', 'run a program'],
    ['ANSIBLE_SCP_EXTRA_ARGS', 'run a program'],
    ['ANSIBLE_SFTP_EXTRA_ARGS', 'run a program'],
    ['ANSIBLE_VAULT_PASSWORD_FILE', 'password file'],
    ['ANSIBLE_LOG_PATH', 'log'],
    ['SHELLOPTS', 'load code'],
    ['PS4', 'load code'],
    ['JAVA_TOOL_OPTIONS', 'load code'],
    ['OPENSSL_CONF', 'load code'],
    ['LUA_INIT', 'load code'],
    ['PERLLIB', 'load code'],
  ])('refuses %s at create, naming the variable and why', (name, why) => {
    expect(reservedEnvNameReason(name)).toContain(why);
    const parsed = CredentialCreateBody.safeParse(envBody({ [name]: 'x', FINE: 'x' }));
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues).toEqual([
      expect.objectContaining({
        path: ['inputs', 'variables', name],
        message: expect.stringMatching(new RegExp(`^${name} is reserved: .*${why}`)),
      }),
    ]);
  });

  it.each([
    'AWS_REGION',
    'AWS_SECRET_ACCESS_KEY',
    'MY_LD_AUDIT',
    'ld_preload_note',
    'HOMEPAGE_URL',
    'ENVIRONMENT',
    'python_note',
    'ANSIBLE_FORCE_COLOR',
    'ANSIBLE_TIMEOUT',
    'ANSIBLE_REMOTE_USER',
    'ANSIBLE_GATHERING',
    'ANSIBLE_SSH_RETRIES',
    'MY_GIT_TOKEN',
    'git_note',
    'SSH_USER',
    'GITHUB_TOKEN',
    'LC_TIME',
  ])('accepts %s', (name) => {
    expect(isReservedEnvName(name)).toBe(false);
    expect(CredentialCreateBody.safeParse(envBody({ [name]: 'value' })).success).toBe(true);
  });
});
