"""A newcomer's first hour (issue 20, finding 10): the README's commands, the packaging metadata
and the default test run.

The README's commands themselves run in `.ci/run`, in a fresh `python3 -m venv` with the pip it
bundles (23.x on Python 3.10-3.12); these tests check what that step relies on.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the test extra brings tomli on 3.10
    import tomli as tomllib


def _readme_commands() -> list[str]:
    """The lines of the README's first two ```bash blocks (what .ci/run runs, the same way)."""
    commands, inside, blocks = [], False, 0
    for line in (REPO / "README.md").read_text("utf-8").splitlines():
        if line == "```bash":
            inside, blocks = True, blocks + 1
        elif line == "```":
            inside = False
        elif inside and blocks <= 2:
            commands.append(line)
    return commands


def test_the_readme_test_command_upgrades_the_bundled_pip_first() -> None:
    install, test = _readme_commands()
    assert install.startswith("pip install . && tlscope ")
    # pip 23.2 ends in ResolutionImpossible on the test extra (aiobotocore, s3fs, gcsfs pins).
    assert test.startswith("python -m pip install -U pip && ")
    assert 'pip install -e ".[test]"' in test and test.endswith("python -m pytest")


def test_ci_runs_the_readme_commands_in_a_fresh_venv_with_its_bundled_pip() -> None:
    ci = (REPO / ".ci" / "run").read_text("utf-8")
    fresh = ci.index("python3 -m venv .venv\n")
    run = ci.index('bash -euo pipefail -c "$command"')
    assert fresh < run
    assert "upgrade pip" not in ci[:run] and "-U pip" not in ci[:run]  # the README's command does it
    assert "README.md" in ci[fresh:run]
    assert "--run-slow" in ci[run:]  # what the fast run left out


def test_no_setuptools_license_warning(tmp_path: Path) -> None:
    """project.license is an SPDX expression, not the deprecated table (three warnings per install)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    assert isinstance(project["project"]["license"], str)
    assert any(r.replace(" ", "").startswith("setuptools>=77") for r in project["build-system"]["requires"])
    import setuptools

    if int(setuptools.__version__.split(".")[0]) < 77:  # a venv's bundled one (65 on Python 3.11)
        pytest.skip(f"setuptools {setuptools.__version__} here; pip builds with setuptools>=77 in isolation")
    copy = tmp_path / "project"
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(".git", "node_modules", ".venv*", "tl_out", "corpus"))
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "always",
            "-c",
            "import os;os.mkdir('meta'); import setuptools.build_meta as m; m.prepare_metadata_for_build_wheel('meta')",
        ],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "license" not in done.stderr.lower(), done.stderr[-2000:]
    metadata = next((copy / "meta").glob("*.dist-info")) / "METADATA"
    assert "License-Expression: BSD-3-Clause" in metadata.read_text("utf-8")


def test_the_default_run_leaves_the_slow_tests_out_and_says_so() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_serve_gcs.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "passed" not in done.stdout.splitlines()[-1]  # nothing of it ran
    assert "slow tests not run" in done.stdout and "--run-slow" in done.stdout
