from services.cli.projections import main

raise SystemExit(main())
