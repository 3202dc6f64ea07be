"""Frozen procurement sheets, sign-offs and signed PDFs."""
