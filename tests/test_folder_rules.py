"""The layout rules of an output folder are written once (format/layout.py) and read the same
synchronously (OutputFolder, a folder on disk) and asynchronously (StoredOutputFolder, what
`serve` reads a store's folder with): on real output folders, and on copies a store may hold
that are not quite what tlscope wrote (a rank without events, an unreadable job summary, no
output folder at all)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from tlscope.format import layout
from tlscope.format.errors import FormatError
from tlscope.format.folder import LocalFiles, OutputFolder, StoredOutputFolder, is_output_folder


class AsyncDisk:
    """A folder on disk behind the asynchronous interface a store gives."""

    def __init__(self, path: Path, *, listable: bool = True) -> None:
        self.local = LocalFiles(path)
        self.listable = listable

    async def is_file(self, rel: str) -> bool:
        await asyncio.sleep(0)
        return self.local.is_file(rel)

    async def read(self, rel: str) -> bytes | None:
        await asyncio.sleep(0)
        return self.local.read(rel)

    async def subfolders(self) -> list[str]:
        return self.local.subfolders() if self.listable else []


def both(path: Path) -> tuple[tuple[bool, list[int], list[tuple[int | None, str]]], ...]:
    """(is an output folder, ranks, parts) as the sync reader and as the async one find them."""
    stored = StoredOutputFolder(AsyncDisk(path), str(path))

    async def read_async() -> tuple[bool, list[int], list[tuple[int | None, str]]]:
        return await stored.is_output_folder(), await stored.ranks(), await stored.parts()

    parts = [(rank, "" if part.path == path else part.path.name) for rank, part in OutputFolder(path).parts()]
    return (is_output_folder(path), OutputFolder(path).ranks(), parts), asyncio.run(read_async())


def test_a_single_logs_folder(viewer_traces: dict[str, Path]) -> None:
    sync, stored = both(viewer_traces["single"])
    assert sync == stored == (True, [], [(None, "")])


def test_a_jobs_folder(viewer_traces: dict[str, Path]) -> None:
    sync, stored = both(viewer_traces["multi"])
    assert sync == stored == (True, [0, 1], [(0, "rank_0"), (1, "rank_1")])
    job = StoredOutputFolder(AsyncDisk(viewer_traces["multi"]), "s3://bucket/job/")
    assert asyncio.run(job.multi_rank()) is OutputFolder(viewer_traces["multi"]).multi_rank is True


def test_a_rank_without_events_is_no_rank(viewer_traces: dict[str, Path], tmp_path: Path) -> None:
    job = shutil.copytree(viewer_traces["multi"], tmp_path / "job")
    (job / layout.rank_file(0, layout.RAW)).unlink()
    sync, stored = both(job)
    assert sync == stored == (True, [1], [(1, "rank_1")])


def test_an_unreadable_job_summary_falls_back_to_the_rank_folders(
    viewer_traces: dict[str, Path], tmp_path: Path
) -> None:
    job = shutil.copytree(viewer_traces["multi"], tmp_path / "job")
    (job / layout.MULTI_RANK_SUMMARY).write_bytes(b"[{not json")
    sync, stored = both(job)
    assert sync == stored == (True, [0, 1], [(0, "rank_0"), (1, "rank_1")])
    # A store that cannot be listed (an https:// host) has nothing to fall back to.
    unlisted = StoredOutputFolder(AsyncDisk(job, listable=False), "https://host/job/")
    assert asyncio.run(unlisted.ranks()) == []


def test_a_folder_of_something_else(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / layout.RAW).write_bytes(b"{}\n")
    sync, stored = both(tmp_path / "notes")
    assert sync[0] is stored[0] is False


def test_a_manifest_is_decoded_typed_or_refused(viewer_traces: dict[str, Path], tmp_path: Path) -> None:
    job = viewer_traces["multi"]
    stored = StoredOutputFolder(AsyncDisk(job), "s3://bucket/job/")
    manifest = asyncio.run(stored.manifest("rank_1"))
    assert manifest == OutputFolder(job).rank(1).manifest()
    with pytest.raises(FormatError, match=r"has no manifest\.json"):
        asyncio.run(stored.manifest())  # a job's folder has no manifest of its own
    broken = shutil.copytree(viewer_traces["single"], tmp_path / "single")
    (broken / layout.MANIFEST).write_bytes(b'{"format": 3}')
    with pytest.raises(FormatError) as refused:
        asyncio.run(StoredOutputFolder(AsyncDisk(broken), "s3://bucket/single/").manifest())
    assert refused.value.line().startswith("s3://bucket/single/manifest.json: Expected `str`")


def test_a_jobs_ranks_are_probed_together(viewer_traces: dict[str, Path]) -> None:
    """One Exists for every rank's raw.jsonl: a store answers them concurrently (asyncio.gather)."""
    rule = layout.ranks_rule()
    assert next(rule) == layout.Exists((layout.MANIFEST,))
    assert rule.send((False,)) == layout.Read(layout.MULTI_RANK_SUMMARY)
    assert rule.send(b'[{"rank": 0}, {"rank": 3}, {"rank": -1}, {"rank": "2"}]') == layout.Exists(
        ("rank_0/raw.jsonl", "rank_3/raw.jsonl")
    )
    with pytest.raises(StopIteration) as done:
        rule.send((True, True))
    assert done.value.value == [0, 3]
