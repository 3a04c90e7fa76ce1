"""One module per command; each `run` returns the exit code."""
