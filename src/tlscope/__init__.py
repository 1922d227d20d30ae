"""tlscope: turns PyTorch structured compile traces (TORCH_TRACE) into answers."""

# A literal, also the package metadata's version (pyproject reads it statically): asking
# importlib.metadata at import time cost ~15 ms of every run's start-up, before any work.
__version__ = "0.1.0"

__all__ = ["__version__", "load", "timeline"]


def __getattr__(name: str) -> object:
    """`tlscope.load` imports the API on first use: `import tlscope` (every command) stays cheap."""
    if name == "load":
        # By name, at first use (PEP 562): the package is every module's parent, so this is the one
        # place a static import of the API would read as a cycle (api -> pipeline -> `__version__`).
        import importlib

        return importlib.import_module("tlscope.api").load
    if name == "timeline":  # `tlscope.timeline.read(path)` after a bare `import tlscope`
        import importlib

        return importlib.import_module("tlscope.timeline")
    raise AttributeError(f"module 'tlscope' has no attribute {name!r}")
