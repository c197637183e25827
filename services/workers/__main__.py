from services.workers.cli import main

raise SystemExit(main())
