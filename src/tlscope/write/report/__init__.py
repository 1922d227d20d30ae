"""The HTML report (tlparse's): `sink.py` feeds each record to the typed handlers of `handlers.py`
(one per event, registered in tlparse's order), which write numbered files through `outputs.py`
and fold into `state.py`; `pages.py`, `stacks.py`, `render.py` and `templates/` make the pages,
`derived.py` the heavy ones in worker processes; `assembly.py` is how the pipeline builds it.
"""
