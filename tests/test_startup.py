"""Start-up: `tlscope --version` and `tlscope --help` import only what they print (issue 21).

Structural, never timed: each runs in a fresh interpreter started as the console script is,
which then lists sys.modules. The parse, the model (msgspec), the analyses, the report (Jinja,
Pygments), the terminal summary (rich) and the server are each tens of milliseconds of imports
that a version or usage line does not need (bench/README.md has the figures).
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "traces"

#: Run the console script with argv, then print the imported modules' names as JSON on stderr.
_PROBE = """
import json, sys
sys.path.insert(0, sys.argv.pop(1))
sys.argv = ["tlscope", *sys.argv[1:]]
from tlscope.cli import main
try:
    status = main()
except SystemExit as stop:
    status = stop.code
sys.stderr.write("\\nMODULES " + json.dumps({"status": status, "modules": sorted(sys.modules)}))
"""

#: Top-level packages and tlscope subpackages a version or usage line must not import.
FORBIDDEN = (
    "msgspec",
    "jinja2",
    "pygments",
    "rich",
    "starlette",
    "uvicorn",
    "tlscope.model",
    "tlscope.read",
    "tlscope.analyse",
    "tlscope.pipeline",
    "tlscope.write",
    "tlscope.serve",
    "tlscope.format",
    "tlscope.api",
)


def imported(*argv: str) -> tuple[object, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(SRC), *argv], capture_output=True, text=True, env=env, timeout=60
    )
    report = json.loads(done.stderr.rpartition("\nMODULES ")[2])
    return report["status"], report["modules"]


#: Allowed although under a forbidden package: the error vocabulary the CLI catches (no import but
#: pathlib; format/__init__ is a docstring), so a command's failure is reported in one place.
ALLOWED = ("tlscope.format", "tlscope.format.errors")


def offenders(modules: list[str]) -> list[str]:
    found = [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    return [m for m in found if m not in ALLOWED]


@pytest.mark.parametrize("flag", ["--version", "-V", "--help", "-h"])
def test_version_and_help_import_no_parse_machinery(flag: str) -> None:
    status, modules = imported(flag)
    assert status == 0
    assert "tlscope.commands.parse_command" in modules  # the flag was answered by the parse command...
    assert offenders(modules) == []  # ...without importing what a parse needs


def test_the_probe_sees_a_parse_import_everything(tmp_path: Path) -> None:
    """The check above can fail: a real (failing) parse imports the forbidden modules."""
    status, modules = imported(str(tmp_path / "missing.log"), "-o", str(tmp_path / "out"), "--no-browser")
    assert status == 1
    assert {"msgspec", "tlscope.pipeline.parse", "tlscope.read.inputs"} <= set(offenders(modules))


#: Modules a parse of one log has no use for (issue 21, the import floor of a small log): asyncio
#: with ssl and sockets (only a store's folder is read asynchronously), statistics (a job's
#: ranks compared), ctypes (only a swap with an existing OUT), dataclasses, pygments.lexer (the
#: highlighting walks lexer.py's scan itself; pygments_lexer.py is the tests' reference), and
#: pygments.formatters once a run has kept the output code pages' colours (write/templates.py),
#: and subprocess (the cleanup guard is started with os.posix_spawn: lifetime.py).
NOT_FOR_ONE_LOG = (
    "asyncio",
    "ssl",
    "socket",
    "statistics",
    "ctypes",
    "dataclasses",
    "pygments.lexer",
    "pygments.formatters",
    "rich",
    "subprocess",
)


def test_a_parse_of_one_log_imports_only_what_it_uses(tmp_path: Path) -> None:
    log = tmp_path / "simple.log"
    log.write_bytes(gzip.decompress(next((CORPUS / "simple").glob("*.log.gz")).read_bytes()))
    imported(str(log), "-o", str(tmp_path / "first"), "--no-browser")  # keeps what later runs read
    status, modules = imported(str(log), "-o", str(tmp_path / "out"), "--no-browser")
    assert status == 0
    assert {"tlscope.write.report.highlight", "jinja2", "msgspec"} <= set(modules)  # it did parse and report
    assert [m for m in NOT_FOR_ONE_LOG if m in modules] == []
