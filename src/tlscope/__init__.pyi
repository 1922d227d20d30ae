# Types of the package's lazy attributes (__init__.py's __getattr__ imports the API on first use).
from tlscope.api import load as load

__version__: str
__all__ = ["__version__", "load"]
