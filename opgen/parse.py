"""Text → lark syntax tree (with spans), reporting syntax errors as diagnostics."""
from __future__ import annotations

import functools
from importlib import resources

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from .diagnostics import Diagnostics
from .expr import Span

# Readable names for the grammar's anonymous terminals in "expected ..." lists.
_TOKEN_TEXT = {
    "SEMICOLON": "';'", "LBRACE": "'{'", "RBRACE": "'}'", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['",
    "RSQB": "']'", "COMMA": "','", "COLON": "':'", "EQUAL": "'='", "VBAR": "'|'", "NAME": "a name",
    "INT": "an integer", "FLOAT": "a number", "STRING": "a string", "LONG_STRING": "a string",
    "CMP_OP": "a comparison", "ADD_OP": "'+' or '-'", "MUL_OP": "'*', '/', '//' or '%'", "MINUS": "'-'",
    "MORETHAN": "'>'", "LESSTHAN": "'<'", "__ANON_0": "'>='", "$END": "end of file", "OPTIONAL": "'optional'",
}
_MAX_SYNTAX_ERRORS = 10


@functools.lru_cache(maxsize=1)
def parser() -> Lark:
    grammar = resources.files("opgen").joinpath("grammar.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True, cache=True)


def span_of(file: str, node: Tree | Token) -> Span | None:
    if isinstance(node, Token):
        if node.line is None:
            return None
        return Span(file, node.line, node.column, node.end_line or node.line, node.end_column or node.column)
    meta = node.meta
    if getattr(meta, "empty", True):
        return None
    return Span(file, meta.line, meta.column, meta.end_line, meta.end_column)


def _describe(token: Token) -> str:
    if token.type == "$END":
        return "end of file"
    return f"'{token.value}'" if token.value else token.type


def _expected(names) -> str:
    shown = sorted({_TOKEN_TEXT.get(n, f"'{n.lower()}'" if n.isupper() and n.isalpha() else n) for n in names})
    if len(shown) > 8:
        shown = shown[:8] + ["..."]
    return ", ".join(shown)


def parse_text(text: str, file: str, diags: Diagnostics) -> Tree | None:
    """Parse one spec; on syntax errors report them (recovering to find more) and return None."""
    diags.sources[file] = text
    errors: list[UnexpectedInput] = []

    def on_error(err: UnexpectedInput) -> bool:
        errors.append(err)
        return len(errors) < _MAX_SYNTAX_ERRORS and not isinstance(err, UnexpectedEOF)

    try:
        tree = parser().parse(text, on_error=on_error)
    except UnexpectedInput as err:  # unrecoverable: the error is the last one recorded
        if not errors or errors[-1] is not err:
            errors.append(err)
        tree = None
    reported_lines: set[int] = set()
    for err in errors:
        line = getattr(err, "line", None) or 0
        if line in reported_lines:  # one error per line: later ones are usually echoes of the first
            continue
        reported_lines.add(line)
        _report(err, file, text, diags)
    return None if errors else tree


def _report(err: UnexpectedInput, file: str, text: str, diags: Diagnostics) -> None:
    if isinstance(err, UnexpectedCharacters):
        ch = text[err.pos_in_stream] if err.pos_in_stream < len(text) else ""
        span = Span(file, err.line, err.column, err.line, err.column + 1)
        if ch == '"':
            diags.error("E001", "unterminated string literal", span, "close the string with '\"' on the same line")
        else:
            diags.error("E002", f"unexpected character {ch!r}", span)
        return
    if isinstance(err, UnexpectedToken):
        tok = err.token
        if tok.type == "$END":
            last = text.rstrip().splitlines() or [""]
            span = Span(file, len(last), max(1, len(last[-1])), len(last), max(1, len(last[-1])) + 1)
            diags.error("E001", f"unexpected end of file, expected {_expected(err.expected)}", span,
                        "a block is probably missing its closing '}'")
            return
        span = span_of(file, tok)
        help_text = None
        if "SEMICOLON" in err.expected:
            help_text = "is a ';' missing at the end of the previous statement?"
        diags.error("E001", f"unexpected {_describe(tok)}, expected {_expected(err.expected)}", span, help_text)
        return
    if isinstance(err, UnexpectedEOF):
        lines = text.splitlines() or [""]
        span = Span(file, len(lines), len(lines[-1]) + 1, len(lines), len(lines[-1]) + 2)
        diags.error("E001", f"unexpected end of file, expected {_expected(err.expected)}", span)
        return
    diags.error("E001", str(err).splitlines()[0], None)
