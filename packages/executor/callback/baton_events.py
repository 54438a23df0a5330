# Baton's notification callback: one JSON line per Ansible event, written to the file descriptor named by
# BATON_EVENTS_FD (a pipe the executor reads as it fills), while the `default` stdout callback keeps the
# human log. Every event carries the stdout line range [start_line, end_line) printed since the previous
# event, so the executor can order events after the log lines they belong to. Paths are reported relative to
# the project root (BATON_PATH_ROOT), never inside the private run directory (BATON_RUN_DIR); a result larger
# than BATON_MAX_RES_BYTES serialized is replaced by {"truncated": true, "bytes": n}.
#
# Line numbers: ansible prints some lines before it loads callbacks (with -v the config file in use, with -vvv
# versions and inventory parsing), which this plugin cannot count. So, once loaded, it prints the line
# SYNC_LINE on stdout; the executor notes where in stdout that line came, drops it from the log, and reads
# every start_line/end_line (counted from it) as lines after it.
#
# JSON: Python writes a NaN or infinite float (a YAML `.nan`, a module's result) as bare NaN/Infinity, which is no
# JSON and would lose the whole event; such floats are written as the strings "NaN", "Infinity", "-Infinity".
from __future__ import annotations

import datetime
import json
import math
import os
import sys
import uuid

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = '''
    name: baton_events
    type: notification
    short_description: structured events for Baton
    description: Writes one JSON object per event to the file descriptor in BATON_EVENTS_FD.
'''


# The same text as SYNC_LINE in run-event-stream.ts.
SYNC_LINE = '[baton-events-sync-7f3a9c]'


class _LineCountingStream:
    """Wraps stdout/stderr (both go to the same pipe) and counts the newlines written through it."""

    def __init__(self, stream, counter):
        self._stream = stream
        self._counter = counter

    def write(self, text):
        self._counter[0] += text.count('\n')
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def _relative(file_path, roots):
    """`file_path` (maybe with a `:line` suffix) relative to the first root it lies in; unchanged outside them."""
    if not file_path:
        return file_path
    for root in roots:
        if root and file_path.startswith(root + os.sep):
            return file_path[len(root) + 1:]
    return file_path


def _finite(value):
    """`value` with every NaN or infinite float replaced by its name, at every depth (JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return 'NaN' if math.isnan(value) else ('Infinity' if value > 0 else '-Infinity')
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _dumps(record):
    """One JSON text; the common case is a single dumps, the rare record holding a NaN or infinity a second one."""
    try:
        return json.dumps(record, default=str, ensure_ascii=False, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(record), default=str, ensure_ascii=False, allow_nan=False)


def _clean(value):
    """Drops Ansible's internal `_ansible_*` keys at every depth."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if not str(k).startswith('_ansible_')}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'notification'
    CALLBACK_NAME = 'baton_events'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._fd = int(os.environ.get('BATON_EVENTS_FD', '-1'))
        self._max_res_bytes = int(os.environ.get('BATON_MAX_RES_BYTES', '0'))
        # The project root first (it lies inside the run directory), each as given and as resolved.
        roots = [os.environ.get('BATON_PATH_ROOT', ''), os.environ.get('BATON_RUN_DIR', '')]
        self._roots = [r for root in roots if root for r in dict.fromkeys([root.rstrip(os.sep), os.path.realpath(root)])]
        self._counter = 0
        self._lines = [0]
        self._last_line = 0
        self._play_uuid = None
        self._task_uuid = None
        self._starts = {}
        # The sync line first, uncounted: lines are counted from just after it (see the top of this file).
        if self._fd >= 0:
            sys.stdout.write(SYNC_LINE + '\n')
            sys.stdout.flush()
        # Display looks sys.stdout/sys.stderr up on every write, so wrapping them here counts every line.
        sys.stdout = _LineCountingStream(sys.stdout, self._lines)
        sys.stderr = _LineCountingStream(sys.stderr, self._lines)

    def _path(self, file_path):
        return _relative(file_path, self._roots)

    def _res(self, raw):
        res = _clean(raw)
        if self._max_res_bytes > 0:
            size = len(json.dumps(res, default=str, ensure_ascii=False, separators=(',', ':')).encode('utf-8'))
            if size > self._max_res_bytes:
                return {'truncated': True, 'bytes': size}
        return res

    def _emit(self, event, data):
        if self._fd < 0:
            return
        sys.stdout.flush()
        self._counter += 1
        end_line = self._lines[0] + 1
        record = {'event': event, 'uuid': str(uuid.uuid4()), 'counter': self._counter,
                  'start_line': self._last_line + 1, 'end_line': end_line, 'created': _now().isoformat()}
        self._last_line = self._lines[0]
        record.update(data)
        line = (_dumps(record) + '\n').encode('utf-8')
        # One write per line; a pipe write larger than PIPE_BUF may be split, but only this process writes.
        while line:
            written = os.write(self._fd, line)
            line = line[written:]

    # playbook, play, task
    def v2_playbook_on_start(self, playbook):
        self._emit('playbook_on_start', {'playbook': self._path(playbook._file_name)})

    def v2_playbook_on_play_start(self, play):
        self._play_uuid = str(play._uuid)
        self._emit('playbook_on_play_start', {'play': play.get_name(), 'play_uuid': self._play_uuid,
                                              'pattern': ','.join(play.hosts) if isinstance(play.hosts, list) else play.hosts})

    def _task_start(self, event, task):
        self._task_uuid = str(task._uuid)
        self._emit(event, {'task': task.get_name(), 'task_uuid': self._task_uuid, 'task_path': self._path(task.get_path()),
                           'parent_uuid': self._play_uuid})

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._task_start('playbook_on_task_start', task)

    def v2_playbook_on_handler_task_start(self, task):
        self._task_start('playbook_on_handler_task_start', task)

    def v2_playbook_on_no_hosts_matched(self):
        self._emit('playbook_on_no_hosts_matched', {})

    def v2_playbook_on_no_hosts_remaining(self):
        self._emit('playbook_on_no_hosts_remaining', {})

    # per host results
    def v2_runner_on_start(self, host, task):
        self._starts[(host.get_name(), str(task._uuid))] = _now()

    def _result(self, event, result, with_res=True, item=False):
        task = result._task
        host = result._host.get_name()
        end = _now()
        start = self._starts.get((host, str(task._uuid)), end)
        if not item:
            self._starts.pop((host, str(task._uuid)), None)
        raw = result._result
        no_log = bool(getattr(task, 'no_log', False)) or bool(raw.get('_ansible_no_log'))
        data = {'host': host, 'task': task.get_name(), 'task_uuid': str(task._uuid), 'task_path': self._path(task.get_path()),
                'parent_uuid': str(task._uuid), 'action': task.action, 'changed': bool(raw.get('changed', False)),
                'start': start.isoformat(), 'end': end.isoformat(), 'duration': (end - start).total_seconds()}
        if no_log:
            data['no_log'] = True
        # A no_log result is never sent, not even censored: its keys alone may tell too much. `res` goes last, so
        # the start of a line too long for the executor to read whole still holds every other field.
        if with_res and not no_log:
            data['res'] = self._res(raw)
        self._emit(event, data)

    def v2_runner_on_ok(self, result):
        self._result('runner_on_ok', result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._result('runner_on_failed', result)

    def v2_runner_on_skipped(self, result):
        self._result('runner_on_skipped', result)

    def v2_runner_on_unreachable(self, result):
        self._result('runner_on_unreachable', result)

    def v2_runner_item_on_ok(self, result):
        self._result('runner_item_on_ok', result, item=True)

    def v2_runner_item_on_failed(self, result):
        self._result('runner_item_on_failed', result, item=True)

    def v2_runner_item_on_skipped(self, result):
        self._result('runner_item_on_skipped', result, item=True)

    def v2_runner_retry(self, result):
        self._result('runner_retry', result, item=True)

    def v2_on_file_diff(self, result):
        self._result('runner_on_file_diff', result, item=True)

    def v2_playbook_on_stats(self, stats):
        hosts = {}
        for host in sorted(stats.processed.keys()):
            s = stats.summarize(host)
            hosts[host] = {'ok': s['ok'], 'changed': s['changed'], 'failed': s['failures'], 'unreachable': s['unreachable'],
                           'skipped': s['skipped'], 'rescued': s['rescued'], 'ignored': s['ignored']}
        self._emit('playbook_on_stats', {'stats': hosts})
