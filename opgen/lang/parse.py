"""Text → lark syntax tree (with spans), reporting syntax errors as diagnostics."""
from __future__ import annotations

import functools
import hashlib
import os
import sys
from pathlib import Path

import lark
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from opgen.core import cache_dir
from opgen.core.diagnostics import Diagnostics
from opgen.core.files import unique_temp
from opgen.lang.expr import Span
from opgen.lang.tables import OPTIONS as _OPTIONS
from opgen.lang.tables import grammar_key, grammar_text

# Readable names for the grammar's anonymous terminals in "expected ..." lists.
_TOKEN_TEXT = {
    "SEMICOLON": "';'", "LBRACE": "'{'", "RBRACE": "'}'", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['",
    "RSQB": "']'", "COMMA": "','", "COLON": "':'", "EQUAL": "'='", "VBAR": "'|'", "NAME": "a name",
    "INT": "an integer", "FLOAT": "a number", "STRING": "a string", "LONG_STRING": "a string",
    "CMP_OP": "a comparison", "ADD_OP": "'+' or '-'", "MUL_OP": "'*', '/', '//' or '%'", "MINUS": "'-'",
    "MORETHAN": "'>'", "LESSTHAN": "'<'", "__ANON_0": "'>='", "$END": "end of file", "OPTIONAL": "'optional'",
}
_MAX_SYNTAX_ERRORS = 10
# What a character that starts no token usually meant (habits from C++ and Python).
_CHAR_HELP = {"&": "write `and` instead of '&&'", "!": "write `not` instead of '!' ('!=' compares)",
              "'": "strings use double quotes", "$": "names are plain identifiers, without '$'",
              "\u201c": "use a plain '\"' instead of a typographic quote",
              "\u201d": "use a plain '\"' instead of a typographic quote"}
_MAX_ECHOES = 200  # tokens skipped while recovering, before giving up on the file


@functools.lru_cache(maxsize=1)
def parser() -> Lark:
    """The spec grammar's parser: from the tables shipped as Python (``opgen.lang.tables``) when they are the
    tables of this grammar under this lark, else built (through lark's cache file when caching is on)."""
    grammar = grammar_text()
    return shipped_parser(grammar) or build_parser(grammar, cache_dir.subdir("lark"))


def shipped_parser(grammar: str) -> Lark | None:
    """The parser read from ``opgen/lang/grammar_tables.py``, or None when that file is not ``grammar``'s tables
    under the installed lark (an edited grammar, another lark release)."""
    from opgen.lang import grammar_tables

    if grammar_tables.GRAMMAR_KEY != grammar_key(grammar) or grammar_tables.LARK_VERSION != lark.__version__:
        return None
    return Lark.load({"data": grammar_tables.DATA, "memo": grammar_tables.MEMO})


def build_parser(grammar: str, cache: Path | None) -> Lark:
    """The LALR parser of ``grammar``; with a cache directory, its tables come from lark's own ``cache=`` file
    (building them costs ~0.12 s), named by a hash of the grammar, the options, lark's and Python's versions."""
    if cache is None:
        return Lark(grammar, **_OPTIONS)
    key = f"{grammar}\0{sorted(_OPTIONS.items())}\0{lark.__version__}\0{sys.version_info[:2]}"
    final = cache / f"grammar-{hashlib.sha256(key.encode()).hexdigest()[:32]}.lark"
    if final.is_file():
        return Lark(grammar, cache=str(final), **_OPTIONS)  # lark checks its own hash and rebuilds on a mismatch
    # lark writes its cache file in place: it writes a private file here, renamed into place whole, so a
    # concurrent build reads the old table file, the new one or none, never half of one
    tmp = unique_temp(cache, final.name)
    parsed = Lark(grammar, cache=str(tmp), **_OPTIONS)
    try:
        os.replace(tmp, final)
    except OSError:
        tmp.unlink(missing_ok=True)
    return parsed


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
    # ';' and '}' first: when they are possible at all, a forgotten one is the likeliest mistake.
    shown = sorted({_TOKEN_TEXT.get(n, f"'{n.lower()}'" if n.isupper() and n.replace("_", "").isalpha() else n)
                    for n in names},
                   key=lambda t: (t not in ("';'", "'}'"), t))
    if len(shown) > 8:
        shown = shown[:8] + ["..."]
    return ", ".join(shown)


def parse_text(text: str, file: str, diags: Diagnostics) -> Tree | None:
    """Parse one spec; on syntax errors report them (recovering to find more) and return None."""
    diags.sources[file] = text
    errors: list[UnexpectedInput] = []
    echoes: list[UnexpectedInput] = []
    last: list = [None]

    def on_error(err: UnexpectedInput) -> bool:
        # Recovery drops the offending token and goes on in the same parser state; a token that fails in
        # exactly that state again (nothing shifted in between) is an echo of the first error, not a new one.
        state = _parser_state(err)
        if isinstance(err, UnexpectedToken) and state is not None and _same_state(state, last[0]):
            echoes.append(err)
        else:
            errors.append(err)
        last[0] = None if isinstance(err, UnexpectedToken) and _insert_missing(err, text) else state
        return len(errors) < _MAX_SYNTAX_ERRORS and len(echoes) < _MAX_ECHOES and not isinstance(err, UnexpectedEOF)

    try:
        tree = parser().parse(text, on_error=on_error)
    except UnexpectedInput as err:  # unrecoverable: the error is the last one recorded
        if err not in errors and err not in echoes:
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


def _starts_line(tok: Token, text: str) -> bool:
    line = text.split("\n", tok.line)[tok.line - 1] if tok.line else ""
    return not line[: max(0, (tok.column or 1) - 1)].strip()


def _insert_missing(err: UnexpectedToken, text: str) -> bool:
    """Recover from a forgotten ';' (before a token that starts a line) or a lone expected punctuation mark.

    Feeds the missing token and the offending one to the parser when that is accepted, so that parsing goes on
    as if the token had been there and later errors are real ones.  Returns whether it did.
    """
    tok, expected = err.token, set(err.expected)
    if tok.type == "$END" or getattr(err, "interactive_parser", None) is None:
        return False
    if "SEMICOLON" in expected and _starts_line(tok, text):
        missing = "SEMICOLON"
    elif len(expected) == 1 and next(iter(expected)) in _INSERTABLE:
        missing = next(iter(expected))
    else:
        return False
    fake = Token.new_borrow_pos(missing, _INSERTABLE[missing], tok)
    try:
        trial = err.interactive_parser.copy(deepcopy_values=False)
        trial.feed_token(fake)
        trial.feed_token(tok)
    except UnexpectedInput:
        return False
    err.interactive_parser.feed_token(fake)
    err.interactive_parser.feed_token(tok)
    return True


_INSERTABLE = {"SEMICOLON": ";", "COLON": ":", "COMMA": ",", "RPAR": ")", "RSQB": "]", "EQUAL": "="}


def _parser_state(err: UnexpectedInput):
    """(states, values) of the LALR stack when ``err`` was raised, or None if lark does not say."""
    state = getattr(getattr(err, "interactive_parser", None), "parser_state", None)
    states, values = getattr(state, "state_stack", None), getattr(state, "value_stack", None)
    if states is None or values is None:
        return None
    return tuple(states), tuple(values)


def _same_state(a, b) -> bool:
    return b is not None and a[0] == b[0] and len(a[1]) == len(b[1]) and all(x is y for x, y in zip(a[1], b[1]))


def _report(err: UnexpectedInput, file: str, text: str, diags: Diagnostics) -> None:
    if isinstance(err, UnexpectedCharacters):
        ch = text[err.pos_in_stream] if err.pos_in_stream < len(text) else ""
        span = Span(file, err.line, err.column, err.line, err.column + 1)
        if ch == '"':
            diags.error("E001", "unterminated string literal", span, "close the string with '\"' on the same line")
        else:
            diags.error("E002", f"unexpected character {ch!r}", span, _CHAR_HELP.get(ch))
        return
    if isinstance(err, UnexpectedToken):
        tok = err.token
        if tok.type == "$END":
            last = text.rstrip().split("\n")
            span = Span(file, len(last), max(1, len(last[-1])), len(last), max(1, len(last[-1])) + 1)
            diags.error("E001", f"unexpected end of file, expected {_expected(err.expected)}", span,
                        "a block is probably missing its closing '}'")
            return
        span = span_of(file, tok)
        help_text = None
        if tok.value == "=" and "CMP_OP" in err.expected:
            help_text = "use '==' to compare"
        elif "VBAR" in err.expected and tok.type == "NAME" and not _starts_line(tok, text):
            help_text = "separate alternatives with '|'"
        elif "SEMICOLON" in err.expected and _starts_line(tok, text):
            help_text = "is a ';' missing at the end of the previous statement?"
        diags.error("E001", f"unexpected {_describe(tok)}, expected {_expected(err.expected)}", span, help_text)
        return
    if isinstance(err, UnexpectedEOF):
        lines = text.split("\n")
        span = Span(file, len(lines), len(lines[-1]) + 1, len(lines), len(lines[-1]) + 2)
        diags.error("E001", f"unexpected end of file, expected {_expected(err.expected)}", span)
        return
    diags.error("E001", str(err).splitlines()[0], None)
