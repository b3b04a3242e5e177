"""``ml_dtypes``, imported on first use.

Importing ml_dtypes registers its ufunc loops with numpy, which costs about a second with numpy 2.x
(the loop registration scans every loop registered before it).  A build only validates shapes, dtype
names and BOOL data, so it never touches an ml_dtypes type: the runtime modules reach the package
through this lazily loaded module, and the import happens when a value is first read from it.
"""
from __future__ import annotations

import importlib.util
import sys


def _lazy(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


ml_dtypes = _lazy("ml_dtypes")
