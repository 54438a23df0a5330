/**
 * Whether a process with this pid exists on this host: signal 0 checks without sending anything. EPERM means
 * it exists under another user. Never asks about pid 0 or negative pids, which would name process groups.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
