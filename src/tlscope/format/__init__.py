"""format: the tlscope output format, the project's boundary (docs/FORMAT.md).

Its schemas (`manifest.py`, `raw.py`, `compiles.py`, `logsize.py`, `timeline_bin.py`), its file
names and folder layout (`layout.py`), the JSON decode boundary (`json_boundary.py`), the error vocabulary
(`errors.py`) and its one reader (`folder.py`). It imports nothing of tlscope but `model/`:
writers, answers, the server and viewers' helpers all build on it.
"""
