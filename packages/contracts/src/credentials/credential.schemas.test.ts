import { describe, expect, it } from '@jest/globals';
import { CredentialCreateBody, isReservedEnvName } from './credential.schemas.js';

const envBody = (variables: Record<string, string>) => ({ name: 'env', type: 'env', inputs: { variables } });

describe('env credential names', () => {
  // Each of these makes the dynamic loader, glibc, a shell or an interpreter load code or files of the caller's choice.
  it.each([
    'LD_AUDIT', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_DEBUG_OUTPUT', 'GCONV_PATH', 'GLIBC_TUNABLES', 'MALLOC_CHECK_', 'MALLOC_ARENA_MAX', 'LOCPATH',
    'NLSPATH', 'HOSTALIASES', 'RES_OPTIONS', 'BASH_ENV', 'ENV', 'HOME', 'TMPDIR', 'PYTHONPATH', 'PYTHONSTARTUP', 'PYTHONHOME', 'PERL5LIB',
    'PERL5OPT', 'RUBYOPT', 'NODE_OPTIONS', 'OPTIND', 'PATH', 'SSH_AUTH_SOCK', 'BATON_X', 'baton_x',
  ])('refuses %s at create, naming the variable', (name) => {
    expect(isReservedEnvName(name)).toBe(true);
    const parsed = CredentialCreateBody.safeParse(envBody({ [name]: './audit.so', FINE: 'x' }));
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues).toEqual([expect.objectContaining({ path: ['inputs', 'variables', name], message: expect.stringContaining('reserved') })]);
  });

  it.each(['AWS_REGION', 'MY_LD_AUDIT', 'ld_preload_note', 'HOMEPAGE_URL', 'ENVIRONMENT', 'python_note', 'ANSIBLE_FORCE_COLOR'])('accepts %s', (name) => {
    expect(isReservedEnvName(name)).toBe(false);
    expect(CredentialCreateBody.safeParse(envBody({ [name]: 'value' })).success).toBe(true);
  });
});
