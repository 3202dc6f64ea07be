"""Connectors move bytes between the workbench and a cluster: SSH nodes, a Kubernetes API
server, Slurm (slurmrestd or its commands over SSH). What they read goes through the parsers
(poc/probes/parsers/) and rules (poc/probes/rules/); they judge nothing themselves."""
