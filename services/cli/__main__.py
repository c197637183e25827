"""``python -m services.cli``: the ``mighty`` command."""

from services.cli import main

raise SystemExit(main())
