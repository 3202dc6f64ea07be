"""The API of evaluations (projects, candidates, actions), mounted under /api/v1/ by the root
URLconf beside the other apps' APIs. Access and authentication live here because project
tokens do: every app's API builds on them."""
