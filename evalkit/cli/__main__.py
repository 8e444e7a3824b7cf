"""``python -m evalkit.cli``: the same as the ``evalkit`` command."""

import sys

from evalkit.cli.main import main

sys.exit(main())
