"""`python -m tlscope` runs the same CLI as the `tlscope` console script."""

from tlscope.cli import console_main

console_main()
