from editf1.cli.main import main

raise SystemExit(main())
