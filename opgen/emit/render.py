"""The Jinja environment every emitter renders with: templates read only the model and computed plans.

Templates get typed filters for every piece of generated syntax (never a Python ``repr``), iterate in model
order (spec order, itself deterministic) and run under ``StrictUndefined``.
"""
from __future__ import annotations

import functools

import jinja2

from opgen.core import cache_dir
from opgen.core.family_parts import ROOT as FAMILIES_ROOT
from opgen.core.fingerprint import generator_fingerprint
from opgen.core.templates import template_root
from opgen.lower import ascendc, cpp, latex, literals, python
from opgen.model.decl import snake

# The typed filters, one module per target language.
FILTER_MODULES = (literals, python, cpp, ascendc, latex)


# In a source checkout the templates sit beside the package; an editable install's finder maps opgen.templates to
# the checkout it was installed from, which is another checkout's templates when this one is a git worktree.


def _load_template(name: str) -> str:
    # a family's kernel template lives in its folder (opgen/core/family_parts.py template_name)
    family = name.removeprefix("families/")
    try:
        if family != name:
            return FAMILIES_ROOT.joinpath(family).read_text(encoding="utf-8")
        return template_root().joinpath(name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise jinja2.TemplateNotFound(name) from None


def template_source(name: str) -> str:
    """A file of the templates as it is, for the files copied into the output unrendered (the C++ family kernels)."""
    return _load_template(name)


def environment() -> jinja2.Environment:
    return _environment(_bytecode_dir())


def _bytecode_dir() -> str | None:
    return _jinja_cache(cache_dir.enabled(), str(cache_dir.root()))


@functools.lru_cache(maxsize=4)
def _jinja_cache(enabled: bool, root: str) -> str | None:
    """Compiled templates are cached per generator fingerprint: jinja checks each template's source itself, but
    not the environment's options or filters, which live in opgen's code the fingerprint covers."""
    d = cache_dir.subdir(f"jinja/{generator_fingerprint()[:32]}") if enabled else None
    return str(d) if d is not None else None


@functools.lru_cache(maxsize=2)
def _environment(bytecode_dir: str | None) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(_load_template),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=jinja2.FileSystemBytecodeCache(bytecode_dir) if bytecode_dir else None,
    )
    for module in FILTER_MODULES:
        env.filters.update(module.FILTERS)
    env.filters["snake"] = snake
    return env


environment.cache_clear = _environment.cache_clear  # forget compiled templates (tests that mutate a template)


def render(template: str, **context) -> str:
    text = environment().get_template(template).render(**context)
    # Generated files end in exactly one newline and carry no trailing spaces.
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def spec_file(op) -> str:
    """The spec's file name, as the banners of generated files name their source."""
    return op.span.file.replace("\\", "/").rsplit("/", 1)[-1] if op.span and op.span.file else f"{op.snake_name}.spec"
