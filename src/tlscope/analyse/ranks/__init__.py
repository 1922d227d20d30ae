"""Cross-rank analyses: read each rank's report folder once into a RankSummary, then compare.

The analyses never read logs: a rank's summary is built from what its parse wrote
(`compile_directory.json`, per-compile artifacts, `raw.jsonl`), exactly the files tlparse's
landing page reads, so tlscope's and tlparse's rank folders can both be compared.
"""
