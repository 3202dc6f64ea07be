"""Procurement: each candidate's terms (licence, price, support, upgrade, exit, security), each
with its basis and history, and what is still to be confirmed. An app of its own (label
`procurement`) nested in reports' folder: above the results it reads, below the sheet that
prints it."""
