"""The compile fold: a log's records folded into compiles.json's entries and distinct graph breaks
(compiles.py, with its accumulator, results, graph breaks, guards, graphs, phases, the
recompiling call's values and the user-code rule; linear.py searches their log text in linear time)."""
