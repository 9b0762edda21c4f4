from sira.cli import main

raise SystemExit(main())
