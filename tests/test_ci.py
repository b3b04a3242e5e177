"""CI runs exactly what the README tells a user to run, and the tiers it documents exist."""
from __future__ import annotations

import re

from .conftest import ROOT


def readme_commands() -> list[str]:
    """The commands of the README's first ``sh`` block, without their comments."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_ci_runs_the_readme_commands_verbatim():
    cmds = readme_commands()
    assert cmds == ["pip install -e . && opgen build specs/dispatch_v2.spec", "python -m pytest"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for cmd in cmds:
        assert f"{{ {cmd}; }}" in ci, cmd
    # and the slow tier and the freshness check
    assert "python -m pytest -m slow" in ci and "opgen build --check specs/*.spec" in ci
    # the NPU-mode rehearsal's torch, whose absence then fails (not skips) its tests
    assert "pip install -e '.[npu-rehearsal]'" in ci and "export OPGEN_NPU_REHEARSAL=required" in ci


def test_the_slow_tier_is_registered_and_deselected_by_default():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r"""^addopts = ".*-m 'not slow'""", text, re.M), "the default tier must deselect slow"
    assert '"slow: ' in text
