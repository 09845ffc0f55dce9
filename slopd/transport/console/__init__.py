"""The console (SPEC §15): the human's pages at `/` of `slopd run --http`, passkey sign-in and approvals."""
