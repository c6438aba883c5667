"""``python -m attnio.cli``: the ``attnio`` command."""

import sys

from attnio.cli import main

sys.exit(main())
