"""tlscope: turns PyTorch structured compile traces (TORCH_TRACE) into answers."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tlscope")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
