"""Whether this process may fork a helper (index workers, a stat check) safely and cheaply."""

from __future__ import annotations

import os
import sys

from codepith.files.queue_watch import settle_closes


def can_fork() -> bool:
    """Forked helpers only where fork is safe and cheap: Linux, and no other thread in this process (a
    thread holding a lock at the fork would leave the child's copy of that lock held for ever).
    ``CODEPITH_FORK=0`` turns them off."""
    if os.environ.get("CODEPITH_FORK", "").strip() == "0":
        return False
    if not (sys.platform.startswith("linux") and hasattr(os, "fork")):
        return False
    return settle_closes() == 1  # a dropped index's watcher may still be closing: not a reason not to fork
