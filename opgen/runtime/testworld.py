"""Old path of ``opgen.harness.testworld``, kept for generated suites built before the harness left ``runtime``."""
import sys

from opgen.harness import testworld as _testworld

sys.modules[__name__] = _testworld
