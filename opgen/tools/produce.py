"""What a build writes for each spec: nothing (its files are as the same build left them), a cache entry, or a
fresh emission.

Per spec, the build key (opgen/tools/build_cache.py) decides: the output directory's record of the key that
wrote it (``write.unchanged_directory``, no file read beyond the manifest's), else the user's build cache, else
the front end and the emitters, whose result is stored under the key.  Output found either way is byte for byte
what emitting gives, since the key covers everything emitting reads; ``use_cache=False`` (``--no-cache``) emits
every spec.  Nothing is loaded for a spec found by its key, unless its op directory is also another spec's
(E101 needs both models).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from opgen.core import cache_dir
from opgen.core.diagnostics import Diagnostics
from opgen.tools.build_cache import Store, build_key
from opgen.tools.progress import Progress
from opgen.core.layout import SHARED_DIR
from opgen.tools.write import OpOutput, manifest_files, op_output, shared_output, unchanged_directory

if TYPE_CHECKING:
    from opgen.model.decl import Op


# The front end loads (lark, the model, its analysis: a quarter of a second) only for a spec its key does not find.
def load(path: str, diags: Diagnostics, display: str | None = None) -> "Op | None":
    from opgen.frontend import loader
    return loader.load(path, diags, display)


def load_text(text: str, file: str, diags: Diagnostics) -> "Op | None":
    from opgen.frontend import loader
    return loader.load_text(text, file, diags)


@dataclass
class Planned:
    """One spec of a build."""
    path: str
    key: str | None                  # None: the spec cannot be read as text (the front end reports why)
    text: str | None = None
    directory: str | None = None     # the op directory, once known
    output: OpOutput | None = None   # what to write; None with a directory: already on disk
    op: "Op | None" = None             # the model, when the spec was loaded
    how: str = ""                    # "unchanged" | "cached" | "emitted" ("": not resolved yet)
    shared: bool = False             # the shared folder (plan_shared), not a spec


def check_unique(ops: "list[tuple[str, Op]]", diags: Diagnostics) -> None:
    """E101: two specs declaring the same op would write one directory, or an op would write the shared one."""
    seen: dict[str, str] = {}
    for p, op in ops:
        if op.snake_name == SHARED_DIR:
            diags.error("E101", f"op {op.name} would be written to {SHARED_DIR}/, the folder of what every op "
                                f"shares; rename the op", op.span)
        if op.snake_name in seen:
            diags.error("E101", f"op {op.name} is also declared in {seen[op.snake_name]}", op.span)
        seen[op.snake_name] = p


def _text(path: str) -> str | None:
    try:
        return Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # loading it again makes the diagnostic (E003)


def plan(paths: list[str], out: Path, fingerprint: str, diags: Diagnostics, progress: Progress,
         use_cache: bool = True) -> list[Planned]:
    """Resolve every spec by its key where possible, load the rest (front-end errors go into ``diags``)."""
    store = Store.open() if use_cache else None
    items = []
    for i, p in enumerate(paths, 1):
        text = _text(p)
        item = Planned(p, build_key(p, text, fingerprint) if text is not None else None, text)
        items.append(item)
        if item.key is None or not use_cache:
            continue
        say = progress.for_spec(i, len(paths), p)
        directory = unchanged_directory(out, item.key)
        if directory is not None:
            item.directory, item.how = directory, "unchanged"
            say("unchanged since the last build")
            continue
        cached = store.get(item.key, Path(p).name, text) if store is not None else None
        if cached is not None:
            item.directory, item.output, item.how = cached.directory, cached, "cached"
            say("from the build cache")
    dirs = [it.directory for it in items if it.directory]
    for i, item in enumerate(items, 1):
        if item.how and dirs.count(item.directory) > 1:
            item.how, item.output = "", None  # a duplicate op: E101 below names both declarations
        if not item.how:
            progress.for_spec(i, len(items), item.path)("checking")
            item.op = load_text(item.text, item.path, diags) if item.text is not None else load(item.path, diags)
            if item.op is not None:
                item.directory = item.op.snake_name
    check_unique([(it.path, it.op) for it in items if it.op is not None], diags)
    return items


def emit_planned(items: list[Planned], store_cache: bool, diags: Diagnostics, progress: Progress,
                 jobs: int = 1) -> None:
    """Emit every loaded spec (in ``jobs`` processes when several are due); an op a generator cannot express gets
    no output, its diagnostics go to ``diags``."""
    todo = [(i, it) for i, it in enumerate(items, 1) if it.op is not None and not it.how]
    if not todo:
        return
    if jobs > 1 and len(todo) > 1:
        results = _emit_in_processes(todo, len(items), jobs, progress)
    else:
        results = (_emit(it.op, progress.for_spec(i, len(items), it.path)) for i, it in todo)
    store = Store.open() if store_cache else None
    for (_, item), (artifacts, failures) in zip(todo, results):
        if failures:
            diags.items.extend(failures)
            continue
        item.output = op_output(item.op.snake_name, Path(item.path).name, item.op.source, artifacts)
        item.how = "emitted"
        if store is not None and item.key is not None:
            store.put(item.key, item.output)


def plan_shared(items: list[Planned], out: Path, fingerprint: str, use_cache: bool = True,
                keep_unchanged: bool = True) -> Planned | None:
    """The shared folder (``opgen.core.layout.SHARED_DIR``) of a build that has an op to write or keep: once per
    build, whatever the number of specs.  Left as it is when the last build by this generator wrote it and its
    files still match their manifest (``use_cache`` and ``keep_unchanged``; --check compares it in full), else
    taken from the build cache under its key (``use_cache``), else emitted (one template, from no spec) and
    stored there."""
    if not any(it.output is not None or it.how == "unchanged" for it in items):
        return None
    key = build_key(SHARED_DIR, "", fingerprint)
    item = Planned(SHARED_DIR, key, "", SHARED_DIR, shared=True)
    if use_cache and keep_unchanged and unchanged_directory(out, key) == SHARED_DIR:
        item.how = "unchanged"
        return item
    store = Store.open() if use_cache else None
    cached = store.get(key, "", None) if store is not None else None
    if cached is not None and cached.directory == SHARED_DIR:
        item.output, item.how = cached, "cached"
        return item
    from opgen.emit.pipeline import emit_shared  # the emitters load only when something is emitted
    item.output, item.how = shared_output(SHARED_DIR, emit_shared()), "emitted"
    if store is not None:
        store.put(key, item.output)
    return item


def _emit(op: "Op", say: Callable[[str], None] | None) -> tuple[list, list]:
    """(artifacts, []) or ([], the diagnostics of a generator that cannot express the op)."""
    from opgen.emit.pipeline import EmitError, emit  # the emitters load only when something is emitted
    try:
        return emit(op, say), []
    except EmitError as err:
        return [], err.diagnostics


def _emit_in_processes(todo: list, total: int, jobs: int, progress: Progress) -> list:
    """Each op emitted in a process of its own, ``jobs`` at a time (a forkserver: no thread state is forked).
    Emitting is a function of the spec's text and path, so a worker's files are the ones emitting here gives."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["opgen.emit.pipeline"])
    workers = min(jobs, len(todo))
    progress.say(f"emitting {len(todo)} specs in {workers} processes")
    pool = ProcessPoolExecutor(workers, mp_context=context)
    try:
        # the longest specs first (the text's length stands for the work: the search grows with the checks),
        # so the last process to finish does not start a long spec when the others are done
        futures = {pool.submit(_emit_worker, item.path, item.op.source, cache_dir.enabled(), str(cache_dir.root())):
                   (i, item) for i, item in sorted(todo, key=lambda t: -len(t[1].op.source))}
        by_index = {}
        for future in as_completed(futures):
            i, item = futures[future]
            by_index[i] = future.result()  # a worker's exception is raised here, as it would be without workers
            progress.for_spec(i, total, item.path)("emitted")
        return [by_index[i] for i, _ in todo]  # in the order of ``todo``
    finally:
        pool.shutdown(cancel_futures=True)


def _emit_worker(path: str, text: str, cache_on: bool, cache_root: str) -> tuple[list, list]:
    os.environ[cache_dir.ENV] = cache_root  # the parent's caches (lark's tables, compiled templates)
    cache_dir.configure(cache_on)
    op = load_text(text, path, Diagnostics())  # the parent checked it: no diagnostics
    return _emit(op, None)


def unchanged_files(out: Path, items: list[Planned]) -> int:
    """The files (manifest included) of the specs whose directories were left as they are."""
    return sum(len(manifest_files(out, it.directory)) + 1 for it in items if it.how == "unchanged")
