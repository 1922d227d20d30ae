"""Run one command and report its wall time and peak RSS: `python -S -I launch.py FD CMD...`.

Why a separate launcher: on exec, Linux folds the *old* address space's peak RSS into the new
program's ru_maxrss. A child forked straight from the benchmark process therefore reports at
least the benchmark process's lifetime peak (verified: a parent that once held 300 MB made
/bin/true report 316 MB). This launcher is exec'd fresh, stays tiny (~10 MB with -S -I and
only os/time imported), and forks the measured command itself, so the command's ru_maxrss is
its own peak with a floor of the launcher's ~10 MB instead of the benchmark's.

It writes "<wall seconds> <ru_maxrss KiB> <exit code> <CPU seconds>" to file descriptor FD and
exits 0 (CPU: user + system of the command and the children it waited for, its page workers);
the command's stdout/stderr are the launcher's.
"""

import os
import sys
import time


def main() -> int:
    report_fd = int(sys.argv[1])
    argv = sys.argv[2:]
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(report_fd)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)  # exec failed: the shell's "command not found" status
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    cpu = usage.ru_utime + usage.ru_stime
    os.write(report_fd, f"{wall!r} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)} {cpu!r}".encode())
    os.close(report_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
