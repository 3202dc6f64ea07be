"""The sheets API: revisions, sign-offs, the PDF and verification, mounted under /api/v1/ by the
root URLconf beside the other apps' APIs."""
