"""`python -m slopd`: the `slopd` command (`slopd.cli.main`)."""

from slopd.cli import main

raise SystemExit(main())
