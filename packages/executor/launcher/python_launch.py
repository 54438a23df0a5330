# A run's launch when ansible-playbook is a Python script (run-launch.ts). Started ahead of the run inside its
# sandbox and launch chain, it imports the libraries ansible-playbook imports at start-up (~130 ms of a ~0.5 s run,
# bench/overhead), then waits on stdin for the run's directory, environment and command (NUL-separated, as the perl
# waiter in run-launch.ts reads them). Given that very script, with an environment that adds nothing Python or those
# libraries read while loading, it runs the script in this process, as `python3 ansible-playbook …` would, without
# the imports. Any other command, or any doubt, it execs as the perl waiter does.
#
# Never ansible's own modules: `ansible.constants` reads the configuration and the environment as it loads, so all of
# ansible loads after the run's environment is in place.
#
# Arguments: the script (ansible-playbook, found on PATH), then `1` to import ahead (a launch kept for the next run)
# or `0` (a launch given its command at once: importing first would only delay it).
import os
import sys

# What ansible-core imports on a plain run outside the ansible package (2.14, python3 -X importtime): the libraries a
# module of ansible imports itself; their own imports come with them. One that is missing or fails is skipped:
# ansible then meets the same failure itself, as it would without this.
PRELOAD = (
    'yaml', 'jinja2', 'jinja2.nativetypes', 'jinja2.sandbox', 'markupsafe',
    'cryptography.exceptions', 'cryptography.hazmat.backends', 'cryptography.hazmat.primitives',
    'cryptography.hazmat.primitives.hashes', 'cryptography.hazmat.primitives.hmac',
    'cryptography.hazmat.primitives.padding', 'cryptography.hazmat.primitives.ciphers',
    'cryptography.hazmat.primitives.kdf.pbkdf2', 'packaging.specifiers', 'packaging.version', 'resolvelib',
    'distro', 'argcomplete', 'selinux', 'xmltodict', 'toml', 'tomli_w', 'typing_extensions',
    'importlib.metadata', 'argparse', 'cmd', 'configparser', 'copy', 'ctypes.util', 'dataclasses', 'datetime',
    'difflib', 'email.parser', 'getpass', 'glob', 'hashlib', 'inspect', 'ipaddress', 'json', 'locale', 'logging',
    'multiprocessing', 'multiprocessing.pool', 'multiprocessing.popen_fork', 'multiprocessing.queues',
    'multiprocessing.synchronize', 'pkgutil', 'pprint', 'pty', 'shlex', 'subprocess', 'tarfile', 'tempfile',
    'tomllib', 'traceback', 'uuid', 'xml.dom.minidom', 'xml.etree.ElementTree',
)

# The only variables a run may add to the launch's start-up environment (which it must otherwise match exactly):
# read by ansible and the callback plugin, never by Python's start-up or the preloaded libraries.
RUN_PREFIXES = ('ANSIBLE_', 'BATON_')
RUN_NAMES = ('SSH_AUTH_SOCK',)
# What the sandbox's shell adds to the environment on its way here; the run's environment does not have them.
SHELL_NAMES = ('PWD', 'OLDPWD', 'SHLVL', '_')


def fail(text, code=255):
    os.write(2, f'baton: {text}\n'.encode(errors='replace'))
    os._exit(code)


def preload():
    import importlib
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:
            pass


def read_command():
    spec = sys.stdin.buffer.read()
    if not spec:
        os._exit(0)  # a launch discarded unused
    null = os.open('/dev/null', os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    fields = [os.fsdecode(f) for f in spec.split(b'\0')]
    cwd, count, rest = fields[0], int(fields[1]), fields[2:]
    env = dict(entry.split('=', 1) for entry in rest[:count])
    return cwd, env, rest[count:]


def resolve(command, search_path):
    if '/' in command:
        return command
    for directory in search_path.split(os.pathsep):
        candidate = os.path.join(directory or '.', command)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def in_process(script, start_env, env, found):
    """Whether the command may run here: the script itself, an environment that adds only run variables, nothing of
    ansible loaded yet."""
    if found is None or os.path.realpath(found) != os.path.realpath(script):
        return False
    if any(env.get(name) != value for name, value in start_env.items()):
        return False
    if any(name not in start_env and not (name.startswith(RUN_PREFIXES) or name in RUN_NAMES) for name in env):
        return False
    return not any(name == 'ansible' or name.startswith('ansible.') for name in sys.modules)


def run_script(found, env, args):
    import importlib
    import runpy
    import signal
    os.environ.clear()
    os.environ.update(env)
    # What Python does at start-up when SIGINT is not ignored (the sandbox's outer process ignores it for us).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    tempfile = sys.modules.get('tempfile')
    if tempfile is not None:
        tempfile.tempdir = None  # found again from TMPDIR, which may not have existed while preloading
    importlib.invalidate_caches()
    sys.argv = [found, *args]
    runpy.run_path(found, run_name='__main__')


def exec_command(env, argv):
    import signal
    # An ignored signal stays ignored across exec: Python ignores SIGPIPE and SIGXFSZ itself, the sandbox SIGINT
    # and SIGTERM.
    for name in ('SIGINT', 'SIGTERM', 'SIGPIPE', 'SIGXFSZ'):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as err:
        fail(f'cannot run {argv[0]}: {err.strerror}')


def main():
    script, ahead = sys.argv[1], sys.argv[2] == '1'
    start_env = {name: value for name, value in os.environ.items() if name not in SHELL_NAMES}
    # As `python3 script` would have it: the script's own directory first, not the current one.
    sys.path[0] = os.path.dirname(os.path.realpath(script))
    if ahead:
        preload()
    cwd, env, argv = read_command()
    try:
        os.chdir(cwd)
    except OSError as err:
        fail(f'cannot enter the run directory: {err.strerror}')
    found = resolve(argv[0], env.get('PATH', os.defpath))
    if in_process(script, start_env, env, found):
        run_script(found, env, argv[1:])
    else:
        exec_command(env, argv)


main()
