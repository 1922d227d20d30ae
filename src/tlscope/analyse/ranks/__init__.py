"""Cross-rank analyses: each rank's facts in a RankSummary (summary.py, folded by facts.py), then
pure comparisons over the summaries (compare.py, table.py, parity.py).

The analyses never read logs or files: a multi-rank run's summaries come from the parses
themselves (pipeline/rankfacts.py); tests/rankdir.py makes the same summary from a rank folder on
disk (tlparse's too), from exactly the files tlparse's landing page reads.
"""
