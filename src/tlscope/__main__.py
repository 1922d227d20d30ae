"""`python -m tlscope` runs the same CLI as the `tlscope` console script."""

import sys

from tlscope.cli import main

sys.exit(main())
