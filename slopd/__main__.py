from slopd.cli import main

raise SystemExit(main())
