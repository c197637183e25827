from services.cli.worker import main

raise SystemExit(main())
