"""PoC results, evidence, responsibilities, API tokens, clusters and probes."""
