"""pipeline: the wiring of one parse (read -> sinks -> OUT), one log or the ranks of a job.

The entry point is `tlscope.pipeline.parse.parse` (commands, serve, run, summary and
`tlscope.load` call it); `single` parses one log, `ranks` the rank logs of a distributed job.
"""
