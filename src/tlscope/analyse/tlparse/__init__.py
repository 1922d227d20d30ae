"""The helpers that reproduce tlparse's report exactly: the compile directory and its numbering
(directory.py), metrics status and failures (metrics.py), stack tries (stack.py), file naming
(naming.py) and provenance line mappings (provenance_lines.py)."""
