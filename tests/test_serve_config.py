"""`tlscope serve`'s config file and flags (docs/SERVER.md, "Config file"), and its failures.

The config examples of docs/SERVER.md are loaded as they are written there, so the document
stays true; unknown keys and unusable values are one-line errors naming the file (exit 2); a
source that cannot be served is a one-line error (exit 1), never a traceback.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import REPO

from tlscope.cli import main as tlscope_main
from tlscope.commands.serve_command import build_parser
from tlscope.serve.config import ConfigError, ServeConfig, load
from tlscope.serve.serve_cli import config_from, warnings_for

DOC = (REPO / "docs" / "SERVER.md").read_text()


def toml_blocks() -> list[str]:
    """The server configs in docs/SERVER.md (not the viewer package's pyproject.toml)."""
    return [b for b in re.findall(r"```toml\n(.*?)```", DOC, flags=re.S) if "[project." not in b]


@pytest.mark.parametrize("index", range(len(toml_blocks())))
def test_the_documented_configs_load(tmp_path: Path, index: int) -> None:
    text = toml_blocks()[index]
    path = tmp_path / "c.toml"
    path.write_text(text)
    config = load(path)
    assert isinstance(config, ServeConfig)


def test_the_full_example_means_what_it_says(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(next(b for b in toml_blocks() if "[stores.team]" in b))
    config = load(path)
    assert config.allow_origins == ["https://viewers.example.com"] and config.token
    team = config.stores["team"]
    assert team.url == "s3://team-traces/runs/" and team.endpoint_url == "http://minio.internal:9000"
    assert team.options == {"profile": "tlscope"} and team.max_concurrency == 8
    assert config.stores["files"].allow_networks == ["10.20.0.0/16"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('allow_origin = ["http://x"]', "allow_origin"),  # a typo must not drop the grant silently
        ('allow_origins = ["http://x/path"]', "no path"),
        ('allow_origins = ["ftp://x"]', "http or https"),
        ("port = 70000", "0..65535"),
        ('[stores.s]\nurl = "file:///etc/"', "must be s3://"),
        ('[stores.s]\nurl = "https://x/"\nallow_networks = ["not a net"]', "not a network"),
        ('[stores."a b"]\nurl = "https://x/"', "letters, digits"),
        ("max_page = 0", "positive"),
        ("port = ", "c.toml"),  # not TOML
        ('port = "8000"', "Expected `int`"),
    ],
)
def test_bad_configs_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load(path)
    assert (message in str(err.value) and str(path) in str(err.value)) or message in str(err.value)


def test_flags_override_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('port = 9000\nallow_origins = ["http://a.example"]\ntoken = "from-file"\n')
    args = build_parser().parse_args(
        ["--config", str(path), "--port", "0", "--allow-origin", "HTTP://B.example:80", "--token", "flag"]
    )
    config = config_from(args)
    assert config.port == 0 and config.token == "flag"
    assert config.allow_origins == ["http://a.example", "http://b.example"]  # normalised as browsers send it


def test_risky_settings_warn() -> None:
    assert warnings_for(ServeConfig()) == []
    assert any("any web page" in w for w in warnings_for(ServeConfig(allow_origins=["*"])))
    assert any("without a token" in w for w in warnings_for(ServeConfig(host="0.0.0.0")))
    assert warnings_for(ServeConfig(host="0.0.0.0", token="t")) == []


def test_command_line_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("nonsense = 1\n")
    assert tlscope_main(["serve", "--config", str(bad), "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.toml" in err and "Traceback" not in err
    assert tlscope_main(["serve", str(tmp_path / "missing.log"), "--no-browser", "--port", "0"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.log" in err
    assert tlscope_main(["serve", "s3://nowhere/x/", "--no-browser", "--port", "0"]) == 1
    assert "no configured store" in capsys.readouterr().err
    viewer = tmp_path / "empty-viewer"
    viewer.mkdir()
    assert tlscope_main(["serve", "--viewer", str(viewer), "--no-browser", "--port", "0"]) == 1
    assert "no index.html" in capsys.readouterr().err


def test_the_testing_table_names_real_tests() -> None:
    """docs/SERVER.md's "How it is tested": every test file and test function it names exists."""
    section = DOC.split("## How it is tested", 1)[1]
    named = 0
    for row in (line for line in section.splitlines() if line.startswith("| ") and "`" in line):
        current: Path | None = None
        for ref in re.findall(r"`([^`]+)`", row.split(" | ", 1)[1]):
            file, _, func = ref.partition("::")
            if file.endswith(".py"):
                current = REPO / ("tests" if "/" not in file else "") / file
                assert current.is_file(), ref
            if func:
                assert current is not None, row
                assert re.search(rf"^def {re.escape(func)}\(", current.read_text(), re.M), (current.name, func)
                named += 1
    assert named > 40
