"""A non-editable `pip install .` ships the grammar and templates: `opgen build` works from anywhere."""
from __future__ import annotations

import os
import shutil
import subprocess
import venv

import pytest

from .conftest import ROOT


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to copy the tracked tree")
def test_wheel_install_builds_from_any_directory(tmp_path):
    # Install from a copy so the editable checkout on sys.path cannot mask missing package data.
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns("generated", ".git", "*.egg-info", "build",
                                                             "__pycache__", ".pytest_cache"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    res = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "-q", str(src)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    shutil.rmtree(src)  # the installed package must not need the source tree
    work = tmp_path / "elsewhere"
    work.mkdir()
    spec = work / "dispatch_v2.spec"
    shutil.copy(ROOT / "specs" / "dispatch_v2.spec", spec)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([str(env_dir / "bin" / "opgen"), "build", "dispatch_v2.spec"], cwd=work, env=env,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (work / "generated" / "moe_distribute_dispatch_v2" / "docs" / "aclnnMoeDistributeDispatchV2.md").is_file()
    # and the installed copy is the one that ran
    where = subprocess.run([str(py), "-c", "import opgen; print(opgen.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert str(env_dir) in where
