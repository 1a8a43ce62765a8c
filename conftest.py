"""pytest, for the whole checkout: modules that import torch at their top (the torch runtime
package and the tests' torch worker) are not collected for doctests when torch is absent; their
tests skip cleanly through ``pytest.importorskip``."""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("torch") is None:
    collect_ignore += ["pipebounds/torch", "tests/torch_runtime_worker.py"]
