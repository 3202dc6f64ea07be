"""Browser pages of the PoC app: results (matrix, cells, comparison, CI) and GPU probes."""
