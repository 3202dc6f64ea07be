"""Browser pages of the PoC app: results (matrix, cells, comparison, CI). GPU probe pages are in
poc.probes.views."""
