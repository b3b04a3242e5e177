"""Typed Jinja filters: model values → target-language syntax.

Every literal that reaches generated code goes through one of these; a value
of a type a target cannot express is a bug in the caller and raises TypeError
(so a Python ``repr`` can never leak into C++ or Markdown).
"""
from __future__ import annotations

import json
import math

from opgen.lang.expr import Expr, format_float, to_spec
from opgen.model.spec_text import alt_text, literal as spec_literal


def cpp_literal(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        if not -(2**63) <= v < 2**63:
            raise TypeError(f"{v} does not fit in int64_t")
        return "INT64_MIN" if v == -(2**63) else f"{v}LL" if abs(v) > 2**31 - 1 else str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "std::numeric_limits<float>::quiet_NaN()"
        if math.isinf(v):
            return ("-" if v < 0 else "") + "std::numeric_limits<float>::infinity()"
        return format_float(v)
    if isinstance(v, str):
        return cpp_string(v)
    raise TypeError(f"no C++ literal for {type(v).__name__}")


def cpp_string(s: str) -> str:
    """A C++ narrow string literal holding the UTF-8 bytes of ``s``."""
    out = ['"']
    for b in s.encode("utf-8"):
        c = chr(b)
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif 0x20 <= b < 0x7F:
            out.append(c)
        else:
            out.append(f"\\{b:03o}")  # octal escapes cannot swallow following hex digits
    out.append('"')
    return "".join(out)


def py_literal(v) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return 'float("nan")'
        if math.isinf(v):
            return 'float("-inf")' if v < 0 else 'float("inf")'
        return format_float(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, tuple):
        inner = ", ".join(py_literal(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, dict):  # in insertion order: callers build dicts in model (spec) order
        return "{" + ", ".join(f"{py_literal(k)}: {py_literal(x)}" for k, x in v.items()) + "}"
    if v is None:
        return "None"
    raise TypeError(f"no Python literal for {type(v).__name__}")


def json_literal(v) -> str:
    """A JSON value: a string, a finite number, a bool, or a list of these."""
    if isinstance(v, float) and not math.isfinite(v):
        raise TypeError(f"no JSON literal for {v}")
    if isinstance(v, list):
        return "[" + ", ".join(json_literal(x) for x in v) + "]"
    if isinstance(v, (bool, int, float, str)):
        return json.dumps(v, ensure_ascii=False)
    raise TypeError(f"no JSON literal for {type(v).__name__}")


def spec_text(e: Expr) -> str:
    return to_spec(e)


def md_escape(s: str) -> str:
    """Text inside a Markdown table cell."""
    return s.replace("|", "\\|").replace("\n", "<br>")


FILTERS = {
    "spec_shape": alt_text,
    "cpp_literal": cpp_literal,
    "cpp_string": cpp_string,
    "py_literal": py_literal,
    "spec": spec_text,
    "spec_literal": spec_literal,
    "md_cell": md_escape,
    "json_literal": json_literal,
}
