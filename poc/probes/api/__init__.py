"""The GPU evidence API: probe runs posted by the agent or CI, clusters and their runs."""
