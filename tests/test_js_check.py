"""The JavaScript's gates (src/tlscope/viewers/package.json, `npm run check`): they pass on the tree,
and they fail on a copy of it with a type error in lib/ or a function over the 60-line limit.

They need the tools `npm ci` installs there (node_modules/, as .ci/run does); without them the
tests skip and say so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import REPO

VIEWERS = REPO / "src" / "tlscope" / "viewers"
#: What the gates read: the configs, the declaration generator, the code, and the schema it types.
GATE_FILES = (
    "package.json",
    "package-lock.json",
    "tsconfig.json",
    "tsconfig.lib.json",
    "eslint.config.mjs",
    "dts.mjs",
    "schema-types.mjs",
)


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("node/npm are not installed: the JS gates (npm run check) cannot run")
    if not (VIEWERS / "node_modules" / ".bin" / "tsc").exists():
        pytest.skip("no src/tlscope/viewers/node_modules: run `npm ci` there (as .ci/run does) for the JS gates")
    return npm


def _check(npm: str, folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0"}
    return subprocess.run(
        [npm, "run", "--silent", "check"], cwd=folder, env=env, capture_output=True, text=True, timeout=600
    )


def _copy(tmp: Path) -> Path:
    """The viewers folder's gated part in `tmp`, laid out as in the repo (dts.mjs reads the
    schema at ../../../docs/schema/), its node_modules linked, not copied."""
    dest = tmp / "src" / "tlscope" / "viewers"
    dest.mkdir(parents=True)
    for name in GATE_FILES:
        shutil.copy2(VIEWERS / name, dest / name)
    for folder in ("lib", "explorer", "templates/vanilla"):
        shutil.copytree(VIEWERS / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "node_modules").symlink_to(VIEWERS / "node_modules", target_is_directory=True)
    shutil.copytree(REPO / "docs" / "schema", tmp / "docs" / "schema")
    return dest


def test_schema_types_follow_the_schemas() -> None:
    # Needs node alone, so a change to docs/schema/ without its JS types fails wherever node runs.
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the schema types (schema-types.mjs) cannot be compared")
    run = subprocess.run(
        [node, str(VIEWERS / "schema-types.mjs"), "--check"], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr


def test_schema_types_fail_when_a_schema_gains_a_field(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the schema types (schema-types.mjs) cannot be compared")
    dest = tmp_path / "src" / "tlscope" / "viewers"
    (dest / "lib").mkdir(parents=True)
    shutil.copy2(VIEWERS / "schema-types.mjs", dest)
    for name in ("compiles-json.js", "manifest-json.js"):
        shutil.copy2(VIEWERS / "lib" / name, dest / "lib" / name)
    shutil.copytree(REPO / "docs" / "schema", tmp_path / "docs" / "schema")
    schema_path = tmp_path / "docs" / "schema" / "compiles.schema.json"
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    schema["$defs"]["CompileEntry"]["properties"]["a_new_field"] = {"type": "string"}
    schema_path.write_text(json.dumps(schema), encoding="utf-8")
    run = subprocess.run([node, str(dest / "schema-types.mjs"), "--check"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "lib/compiles-json.js" in run.stderr, run.stderr
    subprocess.run([node, str(dest / "schema-types.mjs"), "--write"], check=True, timeout=120)
    assert "@property {string} [a_new_field]" in (dest / "lib" / "compiles-json.js").read_text(encoding="utf-8")


def test_npm_run_check_passes_on_the_tree() -> None:
    run = _check(_npm(), VIEWERS)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]


def test_npm_run_check_passes_on_an_unchanged_copy(tmp_path: Path) -> None:
    # The copy below is a faithful stand-in for the tree: unchanged, it passes.
    run = _check(_npm(), _copy(tmp_path))
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]


def test_npm_run_check_fails_on_a_type_error_in_lib(tmp_path: Path) -> None:
    npm = _npm()
    viewers = _copy(tmp_path)
    format_js = viewers / "lib" / "format.js"
    text = format_js.read_text(encoding="utf-8")
    # eventKey is declared to return a string; make one path return a number.
    broken = text.replace("  return '(none)';\n}", "  return 0;\n}", 1)
    assert broken != text
    format_js.write_text(broken, encoding="utf-8")
    run = _check(npm, viewers)
    out = run.stdout + run.stderr
    assert run.returncode != 0, out[-4000:]
    assert "lib/format.js" in out and "TS2322" in out, out[-4000:]


def test_npm_run_check_fails_on_a_function_over_60_lines(tmp_path: Path) -> None:
    npm = _npm()
    viewers = _copy(tmp_path)
    body = "".join(f"  total += {i};\n" for i in range(60))
    long_function = f"\n/** @param {{number}} total */\nexport function tooLong(total) {{\n{body}  return total;\n}}\n"
    # In the explorer, whose functions are in no generated declaration: the lint is what fails.
    with (viewers / "explorer" / "dom.js").open("a", encoding="utf-8") as f:
        f.write(long_function)
    run = _check(npm, viewers)
    out = run.stdout + run.stderr
    assert run.returncode != 0, out[-4000:]
    assert "max-lines-per-function" in out and "tooLong" in out, out[-4000:]
