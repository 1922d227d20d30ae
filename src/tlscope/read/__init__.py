"""read: log lines to typed Records, streaming (see reader.LogReader), and everything else that
knows the log format: the glog prefix (glog), file names (names), ranks (ranks), gzip (source),
what a PATH argument means (inputs), and the log-to-log rewrites split and redact.
"""
