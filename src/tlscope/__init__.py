"""tlscope: turns PyTorch structured compile traces (TORCH_TRACE) into answers."""

# A literal, also the package metadata's version (pyproject reads it statically): asking
# importlib.metadata at import time cost ~15 ms of every run's start-up, before any work.
__version__ = "0.1.0"

__all__ = ["__version__"]
