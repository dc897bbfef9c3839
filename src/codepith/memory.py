"""Process-wide memory settings, made once before the first large array.

No import at module level: the MCP front and ``import codepith`` stay as cheap as before; numpy is
imported only when an index is really made.
"""

from __future__ import annotations

import os

ENV = "NUMPY_MADVISE_HUGEPAGE"  # numpy's own switch: a user who sets it decides, and we leave it alone


def prefer_small_pages() -> bool:
    """Ask numpy not to advise huge pages for its large arrays; True when the setting was made.

    numpy asks the kernel for transparent huge pages (madvise) on every array of 4 MB or more. Where the
    kernel then compacts memory to find each 2 MB page (THP defrag "madvise", its default), a first touch
    costs far more than it saves in TLB reach for arrays that live as long as a query or a reopened
    corpus: on this project's 2-core machine, first-touching 200 MB took 2.4 s that way against 0.15 s in
    4 KB pages, and a cold ``codepith search`` of the Linux kernel 1.86-2.14 s against 1.27-1.68 s
    (benchmarks/README.md, "Huge pages"). Large files are mapped, not allocated, and are not affected."""
    if ENV in os.environ:
        return False
    import numpy as np

    core = getattr(np, "_core", None) or getattr(np, "core", None)
    toggle = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
    if toggle is None:  # a numpy without the switch: its default stands
        return False
    toggle(False)
    return True
