"""A non-editable `pip install .` ships the grammar and templates: `opgen build` works from anywhere."""
from __future__ import annotations

import importlib.util
import os
import shutil
import site
import subprocess
import sysconfig
import venv

import pytest

from .conftest import ROOT


def parent_site_dirs() -> list[str]:
    """The running interpreter's site directories (a venv's own when pytest runs in one, else the system's)."""
    dirs = [*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return list(dict.fromkeys(d for d in dirs if os.path.isdir(d)))


def child_venv(env_dir):
    """A venv that sees the running interpreter's packages (lark, jinja2, numpy, pip) but not its opgen.

    ``system_site_packages=True`` is not enough: inside a venv it exposes the base interpreter's site-packages,
    not the venv's.  A ``.pth`` file in the child's site-packages appends the parent's site directories to
    ``sys.path`` after the child's own; the parent's ``.pth`` files (an editable opgen) are not processed, so
    the opgen the child imports is the one installed into it.
    """
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    with open(os.path.join(purelib, "_opgen_test_parent_site.pth"), "w", encoding="utf-8") as f:
        f.write("".join(d + "\n" for d in parent_site_dirs()))
    return py


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to copy the tracked tree")
@pytest.mark.skipif(importlib.util.find_spec("pip") is None, reason="needs pip in the running interpreter")
def test_wheel_install_builds_from_any_directory(tmp_path):
    # Install from a copy so the editable checkout on sys.path cannot mask missing package data.
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns("generated", ".git", "*.egg-info", "build",
                                                             "__pycache__", ".pytest_cache"))
    env_dir = tmp_path / "venv"
    py = child_venv(env_dir)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "-q", str(src)], env=env,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    shutil.rmtree(src)  # the installed package must not need the source tree
    work = tmp_path / "elsewhere"
    work.mkdir()
    spec = work / "dispatch_v2.spec"
    shutil.copy(ROOT / "specs" / "dispatch_v2.spec", spec)
    # --no-cache: the installed templates and grammar must render it, not an entry an earlier test left
    res = subprocess.run([str(env_dir / "bin" / "opgen"), "build", "dispatch_v2.spec", "--no-cache"], cwd=work,
                         env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (work / "generated" / "moe_distribute_dispatch_v2" / "docs" / "aclnnMoeDistributeDispatchV2.md").is_file()
    assert (work / "generated" / "common" / "op_host" / "op_tiling" / "opgen_check_common.h").is_file()  # its template
    # the C++ family kernels, copied as they are into the shared folder
    kernel = work / "generated" / "common" / "op_kernel" / "moe_dispatch_setup_kernel.h"
    assert kernel.read_bytes() == (ROOT / "templates" / "cpp" / "common" / "op_kernel" / kernel.name).read_bytes()
    # and the installed copy is the one that ran
    where = subprocess.run([str(py), "-c", "import opgen; print(opgen.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert str(env_dir) in where
