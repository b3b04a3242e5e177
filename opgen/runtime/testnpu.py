"""Old path of ``opgen.harness.testnpu``, kept for generated suites built before the harness left ``runtime``."""
import sys

from opgen.harness import testnpu as _testnpu

sys.modules[__name__] = _testnpu
