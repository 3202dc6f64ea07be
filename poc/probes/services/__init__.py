"""Writes of GPU evidence: probe runs from uploads and the agent (`probes`), clusters and their
runs (`clusters`)."""
