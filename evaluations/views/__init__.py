"""Browser pages of evaluations, split by topic; urls.py imports the modules directly."""
