"""Jobs of 8 -> 1,000 ranks (issue 22): parse time per rank, the parent's memory, output size,
timeline.bin's bytes per event, tlscope against tlparse --all-ranks-html, and Dask.

    python bench/ranks.py --ranks 8 64 256 1000 [--work DIR] [--dask 256] [--tlparse 8 64 256]

Each job is built once (kept in --work) by `corpus/scale.py SOURCE --ranks N` from the corpus's
4 real rank logs (`ranks_same_4`: rank r is a jittered copy of real rank r % 4, ~1% straggling,
~1% diverging; see corpus/scale.py). For each N:

- tlscope parses the job with local workers (`-j` = cores); wall and CPU seconds, and the
  **parent's** peak RSS (the driver reads its own VmHWM after the run: the rank workers are
  forked children, not counted; not ru_maxrss, which holds this script's peak too: see DRIVER),
  so "flat in ranks" is the parent's, as the issue asks;
- the output's size: every file once per inode (hard links are one file), against the logs;
- timeline.bin: bytes per event of the job's file, against the ranks' chromium_events.json
  (bytes per event of their JSON arrays; one timeline event is a B/E pair or one instant);
- tlparse 0.4.3 `--all-ranks-html` on the same folder (`--tlparse`): wall and CPU seconds (on a
  loaded machine the CPU seconds of the two are the fairer comparison; both are recorded);
- with `--dask N`: a real `dask scheduler` and two `dask worker` processes (one thread each,
  DASK_DISTRIBUTED__WORKER__DAEMON=False) on this machine, tlscope `--scheduler`.

    python bench/ranks.py --dask-ab 256 --rounds 2 [--work DIR] [--base REV]

alternates local and Dask runs of one job (a fresh cluster for each Dask run), printing for each
the wall and CPU per rank: local, the parent and its workers (`parent_cpu_s`, `workers_cpu_s`);
Dask, the parent (`parent_cpu_s`: the client's thread in it), the scheduler and the workers (their
first rank imports tlscope: counted), with the load average before it. Dask
runs three times a round: `dask` with distributed's default settings, and `dask-noprofile` with the
workers' statistical profiler off (DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False, the setting
docs/MULTIRANK.md recommends for workers dedicated to tlscope), and `dask-lean` with the
cluster's standing monitors made rare as well (DASK_MODES), and `dask-lean-heap`: dask-lean
with the workers' C heap kept between ranks (DASK_HEAP_YAML), and `dask-lean-heap-nonanny`: the
same with workers started by `dask worker --no-nanny` (no nanny process and its monitor). Each Dask row also splits the
workers' CPU by thread (`threads`: /proc/PID/task/TID/stat, named by the worker's own
threading.enumerate()): the task threads parse, `MainThread` is the worker's event loop (and
its profiler's sampling, when on), and the nannies' CPU apart. With `--base REV`, the Dask runs
are this checkout's (`dask`) and REV's (`dask-base`, its src/ extracted as bench/ab.py does, the
parent and the workers importing it), both with distributed's defaults, beside the local run,
the order rotating round by round. Every tree runs with its .pyc files compiled. Outputs go
where TMPDIR says (put it on a tmpfs: an ext4 root's system CPU varied 1.8-8.4 s run to run
for the same 256-rank job's output, session 11).

Runs are `nice -n 10` (the machine is shared). Results: a markdown table on stdout, JSON in
--work/ranks.json.

    python bench/ranks.py --ranks 8 64 --tlparse 8 64 --rounds 3 [--base main]

With `--rounds R`, each job is run R rounds, interleaved: this checkout (and with `--base REV`,
REV's src/, extracted and byte-compiled as bench/ab.py does) and tlparse, the order rotating
round by round (A B T, B T A, T A B, ...), none under nice, each started as the console script
is; it prints each run (wall, CPU of the process tree, load average before it) and per job the
medians with min-max of each side and the per-round ratios (new/base, new/tlparse) with their
median. Both trees run with their .pyc files written (this machine's environment sets
PYTHONDONTWRITEBYTECODE=1: a checkout without them compiles ~200 modules at every start, ~80 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "corpus" / "traces" / "ranks_same_4"
TLPARSE = Path(os.environ.get("TLPARSE_BIN", "/work/venv-tlparse/bin/tlparse"))
NICE = ["nice", "-n", "10"]
#: The process's own peak RSS (KiB): /proc/self/status's VmHWM, the peak of the address space
#: this program was exec'd into. Not ru_maxrss: Linux folds the exec'ing address space's peak
#: into it (bench/launch.py), and the driver is forked from this script, which has imported
#: distributed (the Dask runs' thread split) by the second round of --dask-ab: a local run's
#: parent then read 61 MB instead of its own 29 (session 10's unexplained figure).
_PEAK = (
    "def peak_kib():\n"
    "    try:\n"
    "        with open('/proc/self/status') as status:\n"
    "            return int(next(l for l in status if l.startswith('VmHWM:')).split()[1])\n"
    "    except (OSError, StopIteration):\n"
    "        import resource\n"
    "        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
)
#: Runs tlscope in-process and prints the parent's own CPU seconds (all its threads: a Dask
#: client's too; not its workers') and peak RSS (KiB) last, on stderr.
DRIVER = (
    "import os, sys\n"
    + _PEAK
    + "from tlscope.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print('SELFCPU', os.times().user + os.times().system, file=sys.stderr)\n"
    "print('MAXRSS', peak_kib(), file=sys.stderr)\n"
    "sys.exit(code)\n"
)


#: The console script of the tree whose src/ is argv[1] (its collector settings and exit, as
#: installed), printing the process's own peak RSS (KiB) at exit, on stderr.
_CONSOLE = (
    "import atexit, sys\n"
    + _PEAK
    + "sys.path.insert(0, sys.argv.pop(1))\n"
    "atexit.register(lambda: print('MAXRSS', peak_kib(), file=sys.stderr))\n"
    "from tlscope.cli import console_main\n"
    "console_main()\n"
)


def job_logs(work: Path, ranks: int) -> Path:
    logs = work / f"logs_{ranks}"
    if not (logs / "job_plan.json").is_file():
        subprocess.run(
            [*NICE, sys.executable, str(REPO / "corpus" / "scale.py"), str(SOURCE), "--ranks", str(ranks), "-o", str(logs)],
            check=True,
        )
    return logs


def stored_bytes(folder: Path) -> int:
    """Bytes on disk of `folder`'s files, each inode once (hard links are one file)."""
    seen: dict[int, int] = {}
    for root, _, files in os.walk(folder):
        for name in files:
            st = os.stat(os.path.join(root, name))
            seen[st.st_ino] = st.st_size
    return sum(seen.values())


def run_tlscope(logs: Path, out: Path, extra: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    argv = [*NICE, sys.executable, "-c", DRIVER, str(logs), "-o", str(out), "--overwrite", "--no-browser", *extra]
    start, cpu0 = time.perf_counter(), os.times()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    wall, cpu1 = time.perf_counter() - start, os.times()
    if done.returncode != 0:
        raise SystemExit(f"tlscope failed: {done.stderr[-2000:]}")
    rss = int(done.stderr.rsplit("MAXRSS", 1)[1].split()[0])
    parent_cpu = float(done.stderr.rsplit("SELFCPU", 1)[1].split()[0])
    cpu = (cpu1.children_user + cpu1.children_system) - (cpu0.children_user + cpu0.children_system)
    return {"wall_s": wall, "cpu_s": cpu, "parent_cpu_s": parent_cpu, "parent_rss_mb": rss / 1024}


def run_tlparse(logs: Path, out: Path) -> tuple[float, float]:
    """tlparse's wall and CPU seconds (its CPU: user + system of it and its threads)."""
    start, cpu0 = time.perf_counter(), os.times()
    subprocess.run([*NICE, str(TLPARSE), str(logs), "--all-ranks-html", "--overwrite", "-o", str(out), "--no-browser"], capture_output=True, check=True)
    cpu1 = os.times()
    return time.perf_counter() - start, (cpu1.children_user + cpu1.children_system) - (cpu0.children_user + cpu0.children_system)


def timed(argv: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Wall and CPU seconds (user + system of the process tree) of one command, and the load before it."""
    load = os.getloadavg()[0]
    start, cpu0 = time.perf_counter(), os.times()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    wall, cpu1 = time.perf_counter() - start, os.times()
    if done.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed: {done.stderr[-2000:]}")
    cpu = (cpu1.children_user + cpu1.children_system) - (cpu0.children_user + cpu0.children_system)
    return {"wall_s": wall, "cpu_s": cpu, "load": load}


def rounds_ab(work: Path, ranks: list[int], tlparse: list[int], rounds: int, base: str | None) -> None:
    """`--rounds`: this checkout, `--base`'s tree and tlparse interleaved, round by round."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import harness  # bench/ is a directory of scripts, not a package
    from ab import extract

    # Outputs (and the base tree) where TMPDIR says (the lead's figures: /dev/shm; this machine's
    # ext4 root charges up to ~1 ms of system CPU per file created in a fresh folder, both tools alike).
    scratch = Path(tempfile.mkdtemp(prefix="tlscope-ranks-rounds-"))
    try:
        trees = {"new": REPO / "src"}
        if base:
            trees = {"base": extract(base, scratch / "base-tree"), **trees}
        for src in trees.values():
            harness.compile_bytecode(src)
        for n in ranks:
            _rounds_of(n, job_logs(work, n), scratch, trees, n in tlparse, rounds)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _rounds_of(n: int, logs: Path, scratch: Path, trees: dict[str, Path], tlparse: bool, rounds: int) -> None:
    """One job's rounds. Each side writes over its own previous output (`--overwrite`, as a user
    re-running a job does: the old output's removal is part of both tools' runs)."""
    sides = [*trees, *(["tlparse"] if tlparse else [])]
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # each tree by its own path
    for i in range(rounds):
        for side in sides[i % len(sides) :] + sides[: i % len(sides)]:
            out = scratch / f"{side}_{n}"
            if side == "tlparse":
                argv = [str(TLPARSE), str(logs), "--all-ranks-html", "--overwrite", "-o", str(out), "--no-browser"]
            else:
                argv = [sys.executable, "-c", _CONSOLE, str(trees[side]), str(logs), "--all-ranks-html"]
                argv += ["-o", str(out), "--overwrite", "--no-browser", "-j", str(os.cpu_count() or 1)]
            row = timed(argv, env)
            runs[side].append(row)
            print(
                json.dumps({"ranks": n, "round": i + 1, "side": side, **{k: round(v, 3) for k, v in row.items()}}),
                flush=True,
            )
    summarise(n, runs)


def summarise(ranks: int, runs: dict[str, list[dict[str, Any]]]) -> None:
    for side, rows in runs.items():
        for measure in ("wall_s", "cpu_s"):
            values = sorted(r[measure] for r in rows)
            print(
                f"{ranks} ranks {side:7} {measure[:-2]:4} median {statistics.median(values):.3f} s ({values[0]:.3f}-{values[-1]:.3f})"
            )
    loads = [r["load"] for rows in runs.values() for r in rows]
    print(f"{ranks} ranks load average {min(loads):.1f}-{max(loads):.1f}")
    for other in [s for s in runs if s != "new"]:
        for measure in ("wall_s", "cpu_s"):
            ratios = [n[measure] / o[measure] for n, o in zip(runs["new"], runs[other], strict=True)]
            listed = ", ".join(f"{r:.2f}" for r in ratios)
            print(
                f"{ranks} ranks new/{other} {measure[:-2]:4} per round {listed}: median {statistics.median(ratios):.3f}"
            )


def timeline_figures(out: Path) -> dict[str, Any]:
    with (out / "timeline.bin").open("rb") as f:
        events = struct.unpack("<8sHHIQQQ", f.read(40))[5]
    chromium = sum(json.loads(m.read_text())["chromium_events"] for m in out.glob("rank_*/manifest.json"))
    # The ranks' chromium_events.json (the job keeps no combined copy since 3a48f10: DEVIATIONS.md).
    ch_bytes = sum(p.stat().st_size for p in out.glob("rank_*/chromium_events.json"))
    tl_bytes = (out / "timeline.bin").stat().st_size
    return {
        "timeline_events": events,
        "timeline_bytes_per_event": tl_bytes / max(events, 1),
        "chromium_events": chromium,
        "chromium_bytes_per_event": ch_bytes / max(chromium, 1),
        "chromium_bytes_per_timeline_event": ch_bytes / max(events, 1),
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cluster_cpu(procs: list[subprocess.Popen[bytes]]) -> float:
    """CPU seconds so far of the cluster's processes and their children (a worker's nanny starts it)."""
    import psutil  # distributed's own dependency: there whenever --dask can run

    total = 0.0
    for p in procs:
        try:
            top = psutil.Process(p.pid)
            for q in [top, *top.children(recursive=True)]:
                times = q.cpu_times()
                total += times.user + times.system
        except psutil.Error:
            continue
    return total


#: The workers' settings of each Dask mode of --dask-ab (environment variables of `dask worker`).
DASK_MODES: dict[str, dict[str, str]] = {
    "dask": {},
    "dask-noprofile": {"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"},
    # The cluster's standing costs made rare (a cluster's settings, not tlscope's: what is left of
    # Dask's extra CPU once its per-task cost is paid ~20 times a job): no profiler, the event
    # loops' health check every 1 s (20 ms), the system monitor every 2 s (500 ms), the worker's
    # and nanny's memory monitor every 1 s (100 ms).
    "dask-lean": {
        "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
        "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1s",
        "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "2s",
        "DASK_DISTRIBUTED__WORKER__MEMORY__MONITOR_INTERVAL": "1s",
    },
}
#: `dask-lean-heap`: dask-lean, and the workers' C heap kept between tasks as a local rank worker
#: keeps it (lifetime.keep_heap): the nanny starts its worker with MALLOC_TRIM_THRESHOLD_=65536 by
#: default (distributed.nanny.pre-spawn-environ), returning the heap's free top after every rank.
#: Upper-case keys cannot come through DASK_ environment variables (dask lower-cases them), so
#: this is a config file in DASK_CONFIG's folder, written by dask_ab.
DASK_HEAP_YAML = """distributed:
  nanny:
    pre-spawn-environ:
      MALLOC_TRIM_THRESHOLD_: 8388608
      MALLOC_MMAP_THRESHOLD_: 8388608
"""


#: The same thresholds for a worker without a nanny (`dask worker --no-nanny`): its own environment.
HEAP_ENV = {"MALLOC_TRIM_THRESHOLD_": "8388608", "MALLOC_MMAP_THRESHOLD_": "8388608"}
#: --dask-ab's mode with dask-lean's settings, HEAP_ENV, and workers started with --no-nanny.
NO_NANNY = "dask-lean-heap-nonanny"


def _thread_names() -> dict[int, str]:
    """Run on each worker (Client.run): its threads' names by their kernel thread id."""
    import threading

    return {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}


def _thread_cpu(pid: int) -> dict[int, float]:
    """CPU seconds so far of each thread of `pid` (Linux /proc; nothing elsewhere)."""
    tick = os.sysconf("SC_CLK_TCK")
    cpu = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    for tid in tids:
        try:
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        cpu[int(tid)] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return cpu


class _ThreadSplit:
    """The Dask workers' CPU during a run, by thread name (task threads' names lose their pid)."""

    def __init__(self, address: str) -> None:
        from distributed import Client

        self.address = address
        with Client(address) as client:
            self.pids: list[int] = list(client.run(os.getpid).values())
        self.names: dict[tuple[int, int], str] = {}
        self.before = self._snapshot()

    def _snapshot(self) -> dict[tuple[int, int], float]:
        return {(pid, tid): cpu for pid in self.pids for tid, cpu in _thread_cpu(pid).items()}

    def _learn_names(self) -> None:
        from distributed import Client

        with Client(self.address) as client:
            for pid, names in zip(self.pids, client.run(_thread_names).values(), strict=True):
                self.names.update({(pid, tid): name for tid, name in names.items()})

    def split(self) -> dict[str, float]:
        after = self._snapshot()  # before the Client: its own traffic is not the run's
        self._learn_names()
        by_name: dict[str, float] = {}
        for key, cpu in after.items():
            name = self.names.get(key, "other")
            name = "task threads" if name.startswith("Dask-Default-Threads") else name
            by_name[name] = by_name.get(name, 0.0) + cpu - self.before.get(key, 0.0)
        return {k: round(v, 2) for k, v in sorted(by_name.items(), key=lambda kv: -kv[1]) if v >= 0.01}


def _own_cpu(procs: list[subprocess.Popen[bytes]]) -> float:
    """CPU seconds so far of these processes alone (a `dask worker`'s nanny, not the worker it starts)."""
    import psutil

    total = 0.0
    for p in procs:
        try:
            times = psutil.Process(p.pid).cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def with_dask(
    logs: Path,
    out: Path,
    workers: int = 2,
    settings: dict[str, str] | None = None,
    src: Path | None = None,
    worker_args: tuple[str, ...] = (),
) -> dict[str, Any]:
    """tlscope --scheduler on a fresh cluster (a `dask scheduler`, `workers` single-thread workers on
    loopback, `settings` in their environment): its wall, the parent's CPU and RSS, and
    `cluster_cpu_s`, the scheduler's and workers' CPU during the run (the workers import tlscope
    on their first rank: counted), `scheduler_cpu_s`, `nanny_cpu_s` and the workers' `threads`.
    With `src`, the parent and the workers import tlscope from that tree (PYTHONPATH); `worker_args`
    are added to each `dask worker` command (e.g. --no-nanny)."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    bindir = Path(sys.executable).parent
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False", **(settings or {})}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    procs = [subprocess.Popen([*NICE, str(bindir / "dask"), "scheduler", "--port", str(port), "--no-dashboard"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        time.sleep(3)
        for _ in range(workers):
            procs.append(subprocess.Popen([*NICE, str(bindir / "dask"), "worker", address, "--nthreads", "1", "--no-dashboard", *worker_args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(6)
        threads = _ThreadSplit(address)
        before, scheduler_before, nannies_before = cluster_cpu(procs), cluster_cpu(procs[:1]), _own_cpu(procs[1:])
        row = run_tlscope(logs, out, ["--scheduler", address], env)
        row["cluster_cpu_s"] = cluster_cpu(procs) - before
        row["scheduler_cpu_s"] = cluster_cpu(procs[:1]) - scheduler_before
        # Without a nanny, procs[1:] are the workers themselves: no nanny's CPU to tell apart.
        row["nanny_cpu_s"] = 0.0 if "--no-nanny" in worker_args else _own_cpu(procs[1:]) - nannies_before
        row["threads"] = threads.split()
        return row
    finally:
        _stop(procs[1:])  # the workers first: a worker without a nanny that loses its scheduler
        _stop(procs[:1])  # while it closes waits to reconnect (a --no-nanny run once hung 30 s)


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def dask_ab(work: Path, ranks: int, rounds: int, base: str | None = None) -> None:
    """Local (-j cores) and Dask (a fresh cluster each time, each of DASK_MODES) alternating on one
    job: per rank wall, and CPU per rank (local: the parent and its workers; Dask: the parent,
    scheduler and workers, and the workers' CPU by thread). With `base`, the Dask runs are this
    tree's (`dask`) and `base`'s (`dask-base`, its src/ extracted), distributed's defaults both,
    the modes' order rotating round by round. Every tree runs with its .pyc files compiled."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import harness  # bench/ is a directory of scripts, not a package
    from ab import extract

    logs = job_logs(work, ranks)
    scratch = Path(tempfile.mkdtemp(prefix="tlscope-dask-ab-"))
    trees = {"new": REPO / "src"}
    if base:
        trees["base"] = extract(base, scratch / "base-tree")
    for src in trees.values():
        harness.compile_bytecode(src)
    modes: dict[str, tuple[dict[str, str], Path]] = {name: (settings, trees["new"]) for name, settings in DASK_MODES.items()}
    config = scratch / "dask-config"
    config.mkdir()
    (config / "tlscope-heap.yaml").write_text(DASK_HEAP_YAML, encoding="utf-8")
    modes["dask-lean-heap"] = ({**DASK_MODES["dask-lean"], "DASK_CONFIG": str(config)}, trees["new"])
    # Without a nanny the worker is the `dask worker` process itself, so the heap's thresholds are
    # plain environment variables (no pre-spawn-environ), and no nanny's monitor runs beside it.
    modes[NO_NANNY] = ({**DASK_MODES["dask-lean"], **HEAP_ENV}, trees["new"])
    if base:
        modes = {"dask-base": ({}, trees["base"]), "dask": ({}, trees["new"])}
    order = ["local", *modes]
    env = {**os.environ, "PYTHONPATH": str(trees["new"])}
    try:
        for i in range(rounds):
            for mode in order[i % len(order) :] + order[: i % len(order)]:
                load = os.getloadavg()[0]
                # Outputs where TMPDIR says, as --rounds' (session 11: on this machine's ext4 root the
                # same 256-rank local job took 1.8-8.4 s of system CPU run to run, 1.0 s on tmpfs).
                out = scratch / f"ab_{mode}_{ranks}"
                if mode == "local":
                    row = run_tlscope(logs, out, ["-j", str(os.cpu_count() or 1)], env)
                    row["workers_cpu_s"] = row["cpu_s"] - row["parent_cpu_s"]
                else:
                    settings, src = modes[mode]
                    extra = ("--no-nanny",) if mode == NO_NANNY else ()
                    row = with_dask(logs, out, settings=settings, src=src, worker_args=extra)
                    row["cpu_s"] += row["cluster_cpu_s"]
                    # The parse alone: the task threads' CPU, against a local job's workers'.
                    row["task_cpu_ms_per_rank"] = 1000 * row["threads"].get("task threads", 0.0) / ranks
                if mode == "local":
                    row["task_cpu_ms_per_rank"] = 1000 * row["workers_cpu_s"] / ranks
                row.update(mode=mode, round=i + 1, ranks=ranks, load=load, wall_ms_per_rank=1000 * row["wall_s"] / ranks)
                row["cpu_ms_per_rank"] = 1000 * row["cpu_s"] / ranks
                shutil.rmtree(out, ignore_errors=True)
                print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()}), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--ranks", type=int, nargs="+", default=[8, 64, 256, 1000])
    parser.add_argument("--tlparse", type=int, nargs="*", default=[8, 64, 256])
    parser.add_argument("--dask", type=int, nargs="*", default=[256])
    parser.add_argument("--work", type=Path, default=REPO / "bench" / "out" / "ranks")
    parser.add_argument("--keep", action="store_true", help="keep the output folders")
    parser.add_argument(
        "--dask-ab", type=int, metavar="N", help="only: local and Dask alternating on the N-rank job (--rounds times)"
    )
    parser.add_argument("--rounds", type=int, default=0, help="interleaved rounds (see above); --dask-ab: 2 by default")
    parser.add_argument("--base", help="with --rounds or --dask-ab: this revision's tree too (e.g. main)")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.dask_ab:
        dask_ab(args.work, args.dask_ab, args.rounds or 2, args.base)
        return 0
    if args.rounds:
        rounds_ab(args.work, args.ranks, args.tlparse, args.rounds, args.base)
        return 0
    rows = []
    for n in args.ranks:
        logs = job_logs(args.work, n)
        log_bytes = sum(p.stat().st_size for p in logs.glob("*.log"))
        out = args.work / f"out_{n}"
        row: dict[str, Any] = {"ranks": n, "log_mb": log_bytes / 1e6, "load_before": os.getloadavg()[0]}
        row.update(run_tlscope(logs, out, ["-j", str(os.cpu_count() or 1)]))
        row["per_rank_ms"] = 1000 * row["wall_s"] / n
        row["output_mb"] = stored_bytes(out) / 1e6
        row["output_over_logs"] = row["output_mb"] / row["log_mb"]
        row.update(timeline_figures(out))
        if n in args.dask:
            dask = with_dask(logs, args.work / f"dask_{n}")
            row["dask_wall_s"], row["dask_per_rank_ms"] = dask["wall_s"], 1000 * dask["wall_s"] / n
            row["dask_parent_rss_mb"] = dask["parent_rss_mb"]
            shutil.rmtree(args.work / f"dask_{n}", ignore_errors=True)
        if n in args.tlparse:
            row["tlparse_wall_s"], row["tlparse_cpu_s"] = run_tlparse(logs, args.work / f"tlparse_{n}")
            row["vs_tlparse"] = row["wall_s"] / row["tlparse_wall_s"]
            row["cpu_vs_tlparse"] = row["cpu_s"] / max(row["tlparse_cpu_s"], 1e-9)
            shutil.rmtree(args.work / f"tlparse_{n}", ignore_errors=True)
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)
        row["load_after"] = os.getloadavg()[0]
        rows.append(row)
        print(json.dumps(row), flush=True)
    (args.work / "ranks.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
