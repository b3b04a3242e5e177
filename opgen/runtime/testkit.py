"""Old path of ``opgen.harness.testkit``, kept for generated suites built before the harness left ``runtime``."""
import sys

from opgen.harness import testkit as _testkit

sys.modules[__name__] = _testkit
