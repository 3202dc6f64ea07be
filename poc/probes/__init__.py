"""GPU probes: connectors move bytes, parsers turn them into facts, rules judge the facts."""
