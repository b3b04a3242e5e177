"""Old path of ``opgen.harness.testdata``, kept for generated suites built before the harness left ``runtime``."""
import sys

from opgen.harness import testdata as _testdata

sys.modules[__name__] = _testdata
