"""starroute offline side: OSM import, profiles, graph build, CH, landmarks, and the graph-directory format.

Importing it (`app` imports it too) turns off numpy's `madvise(MADV_HUGEPAGE)` on large arrays unless the user set
`NUMPY_MADVISE_HUGEPAGE`: where transparent huge pages are `madvise` with `defrag=madvise` (common on VMs), every
first touch of such an array stalls in the kernel's direct compaction. Measured on this project's 2-core machines:
100 MB of fresh array memory in 0.93 s with the advice, 0.05 s without; a metric's customization touches that much.
The graph's own arrays are file-backed maps, which the advice never applied to.
"""

import os
import sys

__version__ = "0.1.0"


def _no_hugepage_advice() -> None:
    """numpy without its huge-page advice (module docstring), in this process and the ones it starts."""
    if "NUMPY_MADVISE_HUGEPAGE" in os.environ:
        return  # the user's choice
    os.environ["NUMPY_MADVISE_HUGEPAGE"] = "0"  # read by numpy when it is imported, here or in a child process
    if "numpy" in sys.modules:  # imported before us: switch it off in place
        try:
            from numpy._core.multiarray import _set_madvise_hugepage  # type: ignore[attr-defined]

            _set_madvise_hugepage(False)
        except ImportError:  # pragma: no cover - another numpy layout: its default stands
            pass


_no_hugepage_advice()
