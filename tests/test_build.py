"""The build pipeline as a user drives it: `opgen build`, rebuilds, `--check`, stale files."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from opgen import cli
from opgen.tools import write
from opgen.core.artifact import Artifact
from opgen.core.layout import CHECK_COMMON, SHARED_DIR, SHARED_KERNEL_INCLUDE

from .conftest import ROOT

SPEC = ROOT / "specs" / "dispatch_v2.spec"
OP_DIR = "moe_distribute_dispatch_v2"
DOC = f"{OP_DIR}/docs/aclnnMoeDistributeDispatchV2.md"
SHARED_HEADER = f"{SHARED_DIR}/{CHECK_COMMON}"


def shared_files(out: Path) -> int:
    """The files of the shared folder a build writes beside the op folders (its manifest included)."""
    return len(json.loads((out / SHARED_DIR / "MANIFEST.json").read_text())["files"]) + 1


def run(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_build_then_rebuild_writes_nothing(tmp_path, capsys):
    code, out, _ = run(["build", SPEC, "-o", tmp_path], capsys)
    assert code == 0
    assert (tmp_path / DOC).is_file()
    manifest = json.loads((tmp_path / OP_DIR / "MANIFEST.json").read_text())
    assert manifest["spec"] == "dispatch_v2.spec"
    assert set(manifest["files"]) == {"docs/aclnnMoeDistributeDispatchV2.md"} | set(manifest["files"])
    for rel, digest in manifest["files"].items():
        assert write.sha256((tmp_path / OP_DIR / rel).read_bytes()) == digest
    code, out, _ = run(["build", SPEC, "-o", tmp_path], capsys)
    assert code == 0
    n = len(manifest["files"]) + 1 + shared_files(tmp_path)  # and MANIFEST.json itself, and the shared folder
    assert re.fullmatch(rf"1 spec, 0 files written, {n} unchanged, 0 removed, in \d+\.\d s", out.strip())


def test_check_names_hand_edited_missing_and_stale_files(tmp_path, capsys):
    run(["build", SPEC, "-o", tmp_path], capsys)
    assert run(["build", "--check", SPEC, "-o", tmp_path], capsys)[0] == 0

    doc = tmp_path / DOC
    doc.write_text(doc.read_text() + "hand edit\n")
    code, out, _ = run(["build", "--check", SPEC, "-o", tmp_path], capsys)
    assert code == 1
    assert f"{tmp_path / DOC}: hand-edited" in out

    doc.unlink()
    code, out, _ = run(["build", "--check", SPEC, "-o", tmp_path], capsys)
    assert code == 1 and f"{tmp_path / DOC}: missing" in out

    # a spec change makes the recorded output stale (not hand-edited)
    run(["build", SPEC, "-o", tmp_path], capsys)
    changed = tmp_path / "dispatch_v2.spec"
    changed.write_text(SPEC.read_text(encoding="utf-8").replace("version 2;", "version 3;"), encoding="utf-8")
    code, out, _ = run(["build", "--check", changed, "-o", tmp_path], capsys)
    assert code == 1 and f"{tmp_path / DOC}: stale" in out
    assert not (tmp_path / OP_DIR / "docs" / "x").exists()  # --check writes nothing


def test_obsolete_files_removed_only_when_in_manifest(tmp_path):
    spec_text = SPEC.read_text(encoding="utf-8")
    first = write.op_output(OP_DIR, "s.spec", spec_text, [Artifact("a.txt", "a\n"), Artifact("sub/b.txt", "b\n")])
    write.build(tmp_path, [first])
    (tmp_path / OP_DIR / "notes.txt").write_text("mine\n")  # a user's file, never generated
    second = write.op_output(OP_DIR, "s.spec", spec_text, [Artifact("a.txt", "a\n")])
    assert write.check(tmp_path, [second]) == [write.Problem(f"{OP_DIR}/MANIFEST.json", "stale"),
                                               write.Problem(f"{OP_DIR}/sub/b.txt", "obsolete")]
    report = write.build(tmp_path, [second])
    assert report.removed == [f"{OP_DIR}/sub/b.txt"]
    assert not (tmp_path / OP_DIR / "sub").exists()  # emptied directories go too
    assert (tmp_path / OP_DIR / "notes.txt").read_text() == "mine\n"


def test_unsafe_paths_are_refused(tmp_path):
    for bad in ("../evil.txt", "/abs.txt", "MANIFEST.json"):
        with pytest.raises(ValueError):
            write.op_output(OP_DIR, "s.spec", "", [Artifact(bad, "x")])
    with pytest.raises(ValueError):
        write.op_output("../up", "s.spec", "", [])


def test_interrupted_build_leaves_no_partial_files(tmp_path, monkeypatch):
    spec_text = SPEC.read_text(encoding="utf-8")
    out = write.op_output(OP_DIR, "s.spec", spec_text, [Artifact("a.txt", "new a\n"), Artifact("b.txt", "new b\n")])
    (tmp_path / OP_DIR).mkdir()
    (tmp_path / OP_DIR / "b.txt").write_text("old b\n")
    real_replace = os.replace
    calls = []

    def flaky_replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the user pressed ^C mid-build
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", flaky_replace)
    with pytest.raises(KeyboardInterrupt):
        write.build(tmp_path, [out])
    monkeypatch.setattr(os, "replace", real_replace)
    files = sorted(p.name for p in (tmp_path / OP_DIR).iterdir())
    assert files == ["a.txt", "b.txt"]  # no temp files, no manifest yet
    assert (tmp_path / OP_DIR / "b.txt").read_text() == "old b\n"  # untouched, not half-written
    write.build(tmp_path, [out])  # a rerun completes the build
    assert write.check(tmp_path, [out]) == []


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_output_is_byte_identical_across_hash_seeds_and_directories(tmp_path):
    specs = sorted(str(p) for p in (ROOT / "specs").glob("*.spec"))
    trees = []
    for seed in ("0", "12345"):
        out = tmp_path / f"out{seed}"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        # run from an unrelated working directory: nothing may depend on the cwd
        # --no-cache: the second run must emit too, not find the first one's files in the build cache
        subprocess.run([sys.executable, "-m", "opgen", "build", *specs, "-o", str(out), "--no-cache"], check=True,
                       env=env, cwd=tmp_path, capture_output=True)
        trees.append(_tree(out))
    assert trees[0] == trees[1]
    assert trees[0]


def test_spec_errors_exit_1_and_write_nothing(tmp_path, capsys):
    bad = tmp_path / "bad.spec"
    bad.write_text(SPEC.read_text(encoding="utf-8").replace("attr epWorldSize: int64", "attr epWorldSize: int46"),
                   encoding="utf-8")
    code, out, err = run(["build", bad, "-o", tmp_path / "out"], capsys)
    assert code == 1
    assert "error[E113]: unknown attribute type 'int46'" in err and "did you mean 'int64'?" in err
    assert not (tmp_path / "out").exists()
    assert "Traceback" not in err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["build"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        cli.main(["frobnicate"])
    assert e.value.code == 2


def test_missing_spec_file_is_a_diagnostic(tmp_path, capsys):
    code, _, err = run(["check", tmp_path / "nope.spec"], capsys)
    assert code == 1 and "error[E003]: cannot read" in err


def test_no_change_rebuild_skips_emission_but_not_after_generator_change(tmp_path, capsys, monkeypatch):
    run(["build", SPEC, "-o", tmp_path, "--no-cache"], capsys)
    calls = []
    import opgen.cli as cli_module
    from opgen.emit import pipeline
    real_emit = pipeline.emit
    monkeypatch.setattr(pipeline, "emit", lambda op, *a: calls.append(op.name) or real_emit(op, *a))
    code, out, _ = run(["build", SPEC, "-o", tmp_path], capsys)
    assert code == 0 and calls == []  # spec and generator unchanged, files untouched: nothing emitted
    n = len(json.loads((tmp_path / OP_DIR / "MANIFEST.json").read_text())["files"]) + 1 + shared_files(tmp_path)
    assert f"{n} unchanged" in out
    monkeypatch.setattr(cli_module, "generator_fingerprint", lambda: "another generator")
    code, out, _ = run(["build", SPEC, "-o", tmp_path], capsys)
    assert code == 0 and calls == ["MoeDistributeDispatchV2"]  # a different generator re-emits
    assert out.startswith("1 spec, 0 files written")  # ...and finds the same bytes
    (tmp_path / DOC).write_text("edited\n")
    calls.clear()
    monkeypatch.setattr(cli_module, "generator_fingerprint", lambda: "a third generator")
    code, out, _ = run(["build", "--check", SPEC, "-o", tmp_path], capsys)
    assert code == 1 and calls == ["MoeDistributeDispatchV2"] and "hand-edited" in out


def test_the_shared_folder_is_written_once_for_every_spec_built(tmp_path, capsys):
    """Every op's check core includes common/op_host/op_tiling/opgen_check_common.h, and the Setup/Teardown and
    dispatch ops' kernels common/op_kernel/<family>_kernel.h, the window layout and the BatchWrite helpers: a build of several specs writes them once, with
    a manifest of its own; a rebuild leaves them as they are; --check sees a hand edit."""
    setup = ROOT / "specs" / "combine_setup.spec"
    code, out, _ = run(["build", SPEC, setup, "-o", tmp_path, "-v"], capsys)
    assert code == 0
    assert out.splitlines().count(f"wrote {tmp_path / SHARED_HEADER}") == 1
    header = (tmp_path / SHARED_HEADER).read_bytes()
    manifest = json.loads((tmp_path / SHARED_DIR / "MANIFEST.json").read_text())
    kernels = {f"{SHARED_KERNEL_INCLUDE}/{p.name}": write.sha256(p.read_bytes())
               for p in (tmp_path / SHARED_DIR / SHARED_KERNEL_INCLUDE).iterdir()}
    assert set(kernels) == {f"{SHARED_KERNEL_INCLUDE}/{n}" for n in (
        "opgen_kernel.h", "opgen_kernel_types.h", "opgen_kernel_helpers.h", "opgen_kernel_context.h",
        "opgen_batch_write.h", "opgen_family_window.h", "moe_dispatch_kernel.h",
        "moe_dispatch_setup_kernel.h", "moe_dispatch_teardown_kernel.h", "moe_combine_kernel.h",
        "moe_combine_setup_kernel.h", "moe_combine_teardown_kernel.h")}
    assert manifest == {"files": {CHECK_COMMON: write.sha256(header), **kernels}, "generator": manifest["generator"]}
    gen_h = (tmp_path / "moe_distribute_combine_setup" / "op_kernel" / "moe_distribute_combine_setup_gen.h")
    assert '#include "../../common/op_kernel/moe_combine_setup_kernel.h"' in gen_h.read_text(encoding="utf-8")
    for op in (OP_DIR, "moe_distribute_combine_setup"):
        check_h = (tmp_path / op / "op_host" / "op_tiling" / f"{op}_check.h").read_text(encoding="utf-8")
        assert '#include "opgen_check_common.h"' in check_h
        assert CHECK_COMMON not in json.loads((tmp_path / op / "MANIFEST.json").read_text())["files"]
    before = (tmp_path / SHARED_HEADER).stat().st_mtime_ns
    code, out, _ = run(["build", setup, "-o", tmp_path, "-v"], capsys)  # another build, one spec
    assert code == 0 and "wrote" not in out
    assert (tmp_path / SHARED_HEADER).stat().st_mtime_ns == before
    (tmp_path / SHARED_HEADER).write_bytes(header + b"// edited\n")
    code, out, _ = run(["build", "--check", SPEC, "-o", tmp_path], capsys)
    assert code == 1 and out.splitlines() == [f"{tmp_path / SHARED_HEADER}: hand-edited"]
    code, out, _ = run(["build", SPEC, "-o", tmp_path, "-v"], capsys)  # the edit is not the generator's: restored
    assert code == 0 and out.splitlines()[0] == f"wrote {tmp_path / SHARED_HEADER}"
    assert (tmp_path / SHARED_HEADER).read_bytes() == header


def test_an_op_named_like_the_shared_folder_is_an_error(tmp_path, capsys):
    spec = tmp_path / "common.spec"
    text = (ROOT / "specs" / "combine_setup.spec").read_text(encoding="utf-8")
    spec.write_text(text.replace("op MoeDistributeCombineSetup", "op Common", 1), encoding="utf-8")
    code, _, err = run(["build", spec, "-o", tmp_path / "out"], capsys)
    assert code == 1 and "error[E101]: op Common would be written to common/" in err
    assert not (tmp_path / "out").exists()


def test_a_changed_family_kernel_header_changes_the_generator_fingerprint(monkeypatch, tmp_path):
    """The C++ family kernels are copied into the output as they are: an edit of one must change the generator
    fingerprint (the build cache and every manifest's generator key), as an edit of a template does."""
    import shutil

    from opgen.core import fingerprint

    copy = tmp_path / "templates"
    shutil.copytree(ROOT / "templates", copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(fingerprint, "template_root", lambda: copy)
    fingerprint.generator_fingerprint.cache_clear()
    try:
        before = fingerprint.generator_fingerprint()
        header = copy / "cpp" / "common" / "op_kernel" / "moe_combine_setup_kernel.h"
        header.write_text(header.read_text(encoding="utf-8") + "// edited\n", encoding="utf-8")
        fingerprint.generator_fingerprint.cache_clear()
        assert fingerprint.generator_fingerprint() != before
    finally:
        fingerprint.generator_fingerprint.cache_clear()
