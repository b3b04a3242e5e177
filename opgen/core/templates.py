"""Where the Jinja templates are read from (the renderer and the generator fingerprint must agree)."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

_SOURCE_TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def template_root():
    """Where the templates are read from: this checkout's ``templates/``, else the installed ``opgen.templates``."""
    # A source checkout (editable install or a worktree on sys.path) renders its own templates/, not the
    # directory the editable install happened to map opgen.templates to.
    if (_SOURCE_TEMPLATES / "__init__.py").is_file() and (_SOURCE_TEMPLATES.parent / "pyproject.toml").is_file():
        return _SOURCE_TEMPLATES
    return resources.files("opgen.templates")
