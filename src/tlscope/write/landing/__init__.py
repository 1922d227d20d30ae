"""The multi-rank landing page and the combined files beside it."""
