"""Browser pages of GPU evidence: probe runs and uploads (`probes`), clusters (`clusters`)."""
