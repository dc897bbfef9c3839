"""``python -m codepith``: the same command as the ``codepith`` script."""

import sys

from codepith.surfaces.cli import entry

sys.exit(entry())
