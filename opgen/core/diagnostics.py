"""User-facing diagnostics: stable codes, source carets, did-you-mean.

A spec error is the user's error, never a Python traceback.  Every stage
reports into a ``Diagnostics`` bag and keeps going so that one run shows all
the errors of a file; the CLI renders them as

    specs/x.spec:12:5: error[E102]: unknown name 'epWorldSze'
       12 |     require epWorldSze >= 2 else tiling ...
          |             ^^^^^^^^^^
      = help: did you mean 'epWorldSize'?
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Iterable

from opgen.core.span import Span

# Stable error codes.  Never renumber: tools and users grep for them.
CODES: dict[str, tuple[str, str]] = {
    "E001": ("syntax error", "The text does not follow the grammar of the spec language. The message lists the "
             "tokens that could have come next; a missing ';' at the end of the previous statement is the usual cause."),
    "E002": ("invalid character", "A character that cannot start any token, such as '$' or a stray non-ASCII symbol "
             "outside a string literal."),
    "E003": ("cannot read spec", "The spec file could not be opened or is not valid UTF-8."),
    "E101": ("duplicate declaration", "Inputs, outputs, attributes, lets, defs, envs, products and quant modes share "
             "one namespace per op; each name may be declared once."),
    "E102": ("unknown name", "An expression refers to a name that is not an input, output, attribute, let, env, "
             "def parameter, quant-mode local or builtin constant."),
    "E103": ("unknown dtype", "Dtypes are CANN's names: FLOAT16, BFLOAT16, FLOAT32, INT8, INT32, INT64, BOOL, "
             "FLOAT8_E5M2, FLOAT8_E4M3FN, FLOAT8_E8M0, HIFLOAT8, FLOAT4_E2M1, FLOAT4_E1M2, UINT8."),
    "E104": ("unknown product", "Products are CANN SoC ids with a row in the product table (opgen/core/products.py): "
             "ascend910b (Atlas A2), ascend910_93 (Atlas A3), ascend950 (Ascend 950); another id must `extends` "
             "one of them and runs on that SoC's hardware."),
    "E105": ("unknown format", "Formats are ge::Format names without the FORMAT_ prefix: ND, NCHW, NHWC, FRACTAL_NZ."),
    "E106": ("bad call", "The function is unknown, or it was called with the wrong number of arguments or an "
             "unknown keyword. `opgen explain functions` lists the builtins."),
    "E107": ("bad default", "An attribute default must have the attribute's type and lie in its declared range or "
             "set."),
    "E108": ("bad range", "A range's lower bound must not exceed its upper bound, and both bounds must be "
             "constants of the attribute's type."),
    "E109": ("bad product inheritance", "`extends` must name a product declared in the same spec, and inheritance "
             "must not form a cycle."),
    "E110": ("bad quant mode", "Quant modes are small non-negative integers declared once each; a product's "
             "`quant_modes` may only name declared modes, and a quant body may only assign outputs and its own lets."),
    "E111": ("type error", "Operands do not fit the operator: arithmetic needs numbers, `and`/`or`/`not` need "
             "booleans, comparisons need operands of one kind (number, string, dtype, bool)."),
    "E112": ("cyclic definition", "A let or def refers to itself, directly or through others."),
    "E113": ("bad attribute type", "Attribute types are int64, float, bool, string and list<T> of those."),
    "E114": ("bad error class", "The class after `else` is the aclnn status a failing check returns: nullptr "
             "(161001), invalid (161002), tiling (561002), or warn (a logged warning, not an error)."),
    "E115": ("bad op name", "The op name must be UpperCamelCase ASCII ([A-Z][A-Za-z0-9]*); it becomes file and "
             "directory names, so nothing else is accepted."),
    "E116": ("missing declaration", "Every op needs a version, a doc, at least one product, one input and one "
             "output."),
    "E117": ("unbound shape dim", "A name in a shape is neither declared elsewhere nor bound by an earlier input "
             "shape. Inputs bind bare dim names left to right; outputs can only use bound names."),
    "E118": ("bad override", "A product may only override parameters the op declares, and `input X unsupported` "
             "only applies to optional inputs."),
    "E119": ("bad blame", "A check must blame an input, output, attribute, let or env of the op."),
    "E120": ("duplicate label", "Constraint labels must be unique within one scope (the op, or one product)."),
    "E122": ("unknown semantics", "`semantics NAME;` names the data-movement pattern whose numpy driver runs the op: "
             "moe_dispatch, moe_combine, moe_dispatch_setup, moe_dispatch_teardown, moe_combine_setup, "
             "moe_combine_teardown."),
    "E121": ("bad literal", "A string literal contains an unknown escape, or a number is out of the 64-bit range."),
    "E125": ("bad aclnn entry point", "`aclnn aclnnName(p, ...);` declares an aclnn entry point over the op: its name "
             "is `aclnn` then UpperCamelCase, unique per op (it names the op_api files); its parameters are the op's "
             "inputs, attributes and outputs, each once, in the document's order. Every required input, required "
             "attribute and output must be among them (an omitted optional input is passed as null, an omitted "
             "optional attribute as its default, or as `omitted = dtype(t)` says: the ge::DataType value of a "
             "tensor t the entry point takes, for an int64 attribute); `nonconst` only applies to an input tensor "
             "or a string attribute."),
    "E123": ("formula shape mismatch", "A quant formula is written for one token row; each value is a per-token "
             "scalar, a row, or per-block values (block_max(row, n)). An output of rank 1 takes one scalar per "
             "token, an output of rank 2 or more a row or per-block values; reduce_max and block_max reduce rows, "
             "per_block(v, n) broadcasts a scalar or blocks of n, and rows combine only with scalars or rows of "
             "the same blocking. Outputs a mode's products all mark `unspecified` are not checked."),
    "E124": ("formula dtype mismatch", "A value whose dtype the formula fixes (cast(v, D), e8m0(...), an input "
             "read unchanged) must be one of the assigned output's declared dtypes (an fp32-family value may "
             "also go to a FLOAT32 output)."),
    "E126": ("bad window", "`window DOMAIN: ENV { halves N; area NAME = bytes; ...; state windowsIn = bytes; }` "
             "declares one rank's HCCL window of a comm domain as the kernels lay it out: N data halves of the areas "
             "in order, then the status area. DOMAIN is a `comm` domain of the op, ENV the env that sizes the "
             "window (or an expression of that env alone, in bytes, and constants: `HCCL_BUFFSIZE // 2`; or of "
             "attributes), `area NAME over OTHER = bytes;` an area that starts where an earlier area OTHER starts, "
             "each item is given once, areas at least one and each name once, the status area's window one "
             "the kernels can reach (windowsIn, windowsExp where the product's HCCL context lists one: Atlas A3, "
             "ProductFacts.exp_window, or windowsOut where the kernels read the context's window lists: Ascend 950, "
             "ProductFacts.context_windows). One window per op and per product (a product's replaces the op's "
             "or its base's). Every product of an op family whose kernel addresses window areas (opgen/core/"
             "families.py window_areas) must have a window declaring them."),
    "E127": ("unspecified without a reason", "An output nothing writes (the op's semantics does not, opgen/core/"
             "families.py `writes`, and no quant formula assigns it) is marked `output X unspecified \"why\";` "
             "with the reason its contents are undefined; the docs show it."),
    "E128": ("unknown check in a mark", "`unreachable ID, ... \"why\";` and `narrower ID \"RANGE\" code \"SOURCE\";` "
             "in a product name checks of that product's view by the ids the coverage report and the docs print "
             "(`dtype.x`, `op.moeExpertNum.2`, `ascend910b.epWorldSize`, `transport.epWorldSize`), each once per "
             "product and kind of mark. A `narrower` mark says the documented domain the check keeps is narrower "
             "than what the real op accepts (RANGE, read in the code file SOURCE); `opgen products` and the "
             "generated docs show it."),
    "E129": ("bad special expert", "`special NAME: COUNT \"doc\" { Moe = ...; }` declares COUNT expert ids after the "
             "MoE experts (consecutive ranges in declaration order) whose value the combine side computes itself: "
             "COUNT is an int64 attribute, the body is a quant formula for one token row that assigns Moe exactly "
             "once, outside `when` (`routed(T)` is T's row of this special expert; `Moe = 0` adds nothing). A family "
             "that only leaves those ids unsent (the dispatch side) declares the range alone, `special NAME: COUNT "
             "\"doc\";`, and a formula there is an error, as a missing one is on the combine side."),
    "E130": ("bad post-reduction stage", "`post NAME \"doc\" { OUT = ...; }` is a formula over one token's reduced "
             "row NAME (the fp32 weighted sum over the token's experts, before any cast): only a family that reduces "
             "(opgen/families/<name>/facts.py `reduced`) has one, once per op; its body assigns outputs, each once "
             "and outside `when`, never NAME itself."),
    "E131": ("bad send", "`send a, b;` splits a quant mode between ranks: the statements before it run on the "
             "rank that sends the row, the named lets are what travels, the statements after it run on the "
             "rank that receives them. It stands once, at the top level of a quant mode of a family whose "
             "kernel splits formulas (moe_combine: the row an expert returns); it names lets of the part "
             "before it; outputs are assigned only after it, and the part after it reads no tensor or let "
             "of the sender's part but the sent ones (dtype(t) is known on both ranks)."),
    "E132": ("bad role binding", "`role ROLE = PARAM;` names the parameter an op family's code calls ROLE (its "
             "default name, e.g. assistInfoForCombine) where the op's documents call it PARAM (e.g. expandIdx): ROLE "
             "is a role its family declares (opgen/families/<name>/facts.py `roles`) and PARAM a declared "
             "parameter of the same kind (input, output, attr). Each role and each parameter is bound once, a "
             "role is not bound to its own name, and the op declares no other parameter under the role's name."),
    "E133": ("bad OpDef config", "`op_file \"NAME\";` and `jit_compile FLAG;` in a product set its AI Core config "
             "of the OpDef: NAME is the kernel entry it builds (opFile.value, the file op_kernel/<arch dir>/NAME.cpp; "
             "a C identifier), FLAG its jitCompile.flag (static_true, the default, or static_false). Each is given "
             "once per product; a product that gives neither takes the nearest product it extends, else the op's "
             "one entry op_kernel/<op>.cpp and static_true."),
    "E134": ("paired ops disagree", "Checked together (`opgen check A.spec B.spec`), two ops of a pair "
             "(`pairs_with`) must accept the same values of a parameter they share, on every product both support: "
             "the documents require both ops to get the same value. A difference is a warning at the domain in "
             "both specs (a caller of the pair can use only the values both accept); domains with no value in "
             "common are an error, as every world the pairing runs is rejected by one side."),
    "E135": ("bad graph fact", "`graph input|output|attr NAME ...;` states where the op's REG_OP proto (graph "
             "mode) differs from its OpDef: NAME is a declared parameter of that kind, named once; `ir \"name\"` its "
             "proto name (a C identifier no other proto parameter has), `: A | B` a tensor's dtype set (known "
             "dtypes, each once), `= VALUE` an optional attribute's default (of its type), `after NAME` an "
             "attribute's place: right after another attribute of its REQUIRED_ATTR / ATTR group."),
    # back-end (opgen build): the front end accepted the spec, a generator for one artefact cannot express it
    "E201": ("kernel cannot be generated", "The Ascend C kernel of the op cannot be emitted: its semantics' kernel "
             "template needs a name the spec does not declare, a quant formula uses a primitive or a combination "
             "the kernel lowering has no instruction sequence for (e.g. row arithmetic on a non-fp32 row, a "
             "data-dependent test that is not one comparison), a formula's dtype does not fit its output in a "
             "reachable configuration, or a declaration the kernel needs is missing. Nothing is written for the "
             "op; a mode that is meant to have no kernel has an empty formula body."),
    "E202": ("no target type", "A dtype, format or attribute type of the spec has no representation in a "
             "generated artefact (e.g. a dtype row without an Ascend C element type in opgen/lower/ascendc.py "
             "CPP_TYPES, or without a ge::DataType). Add it to the generator's tables, or drop it from the spec."),
    "E203": ("cannot generate artefact", "A generator other than the kernel's (host code, C++ check core, numpy "
             "reference, tests, docs) cannot express a declaration or an expression of the spec. Nothing is "
             "written for the op."),
    "E204": ("output never written", "Every declared output is written by the op's semantics (its numpy driver "
             "and kernel, opgen/families/<name>/facts.py `writes`) or by a quant formula, or the product marks it "
             "`output X unspecified \"why\";`: an output nothing writes would pass every test on an untouched "
             "buffer, so the op is not built."),
    "E206": ("missing role", "Every generator reads the op in its family's role names (opgen/model/roles.py): each "
             "role the family reads unconditionally (all but its `optional_roles`, the optional inputs it reads as "
             "absent) is a parameter of the op, under the role's name or bound with `role ROLE = PARAM;`. The error "
             "at the op's `semantics` names the roles of that kind the family expects and a near parameter name "
             "(`opgen explain roles` lists every family's); nothing is generated for the op. `opgen check` accepts "
             "such a spec (a spec that is only diffed, as specs/history/dispatch_v1.spec, needs no buildable "
             "family)."),
    "E205": ("unreachable check", "The negative search (opgen/testgen/negative.py) found no accepted call that "
             "one change, or a change and a second one satisfying the earlier check that caught it, lets through "
             "to this check: it can never be the check that rejects a call, so an `opgen test` that says ok would "
             "not have tested it. A check the product's own declarations switch off (an unsupported input, an "
             "ignored attribute, a domain its condition leaves out) needs nothing; any other is either dead (drop "
             "it, or fix the check that shadows it) or unreachable for a reason the spec states with "
             "`unreachable ID \"why\";` in that product. A mark on a check some negative test trips is an error "
             "too, so marks stay true."),
}


def explain(code: str) -> str | None:
    entry = CODES.get(code.upper())
    if entry is None:
        return None
    title, text = entry
    return f"{code.upper()}: {title}\n\n{text}\n"


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    pool = sorted(set(candidates))
    matches = difflib.get_close_matches(word, pool, n=1, cutoff=0.6)
    if not matches:
        lowered = {c.lower(): c for c in pool}
        if word.lower() in lowered:
            return lowered[word.lower()]
        return None
    return matches[0]


def guess_help(word: str, candidates: Iterable[str]) -> str | None:
    """The help line of a misspelling: "did you mean 'x'?" (None when nothing is close)."""
    g = did_you_mean(word, candidates)
    return f"did you mean '{g}'?" if g else None


def count_args(n: int) -> str:
    return f"{n} argument{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    span: Span | None
    help: str | None = None
    severity: str = "error"


@dataclass
class Diagnostics:
    """Collects diagnostics for one or more files; the source text renders carets."""
    sources: dict[str, str] = field(default_factory=dict)
    items: list[Diagnostic] = field(default_factory=list)

    def error(self, code: str, message: str, span: Span | None, help: str | None = None) -> None:
        if code not in CODES:
            raise KeyError(f"unregistered diagnostic code {code}")
        self.items.append(Diagnostic(code, message, span, help))

    def warning(self, code: str, message: str, span: Span | None, help: str | None = None) -> None:
        if code not in CODES:
            raise KeyError(f"unregistered diagnostic code {code}")
        self.items.append(Diagnostic(code, message, span, help, "warning"))

    def unknown(self, code: str, what: str, word: str, candidates: Iterable[str], span: Span | None) -> None:
        guess = did_you_mean(word, candidates)
        self.error(code, f"unknown {what} '{word}'", span, f"did you mean '{guess}'?" if guess else None)

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.items)

    def sorted(self) -> list[Diagnostic]:
        def key(d: Diagnostic):
            s = d.span
            return (s.file, s.line, s.col, d.code, d.message) if s else ("", 0, 0, d.code, d.message)
        unique = {(d.code, d.message, d.span, d.help): d for d in self.items}
        return sorted(unique.values(), key=key)

    def render(self, color: bool = False) -> str:
        return "".join(render(d, self.sources.get(d.span.file) if d.span else None, color) for d in self.sorted())


def _visible(line: str) -> str:
    """A source line safe to print: tabs become spaces, other control characters their one-column pictures."""
    line = line.removesuffix("\r").replace("\t", " ")
    return line.translate(_CONTROL_PICTURES)


# Control characters print as their pictures (U+2400...), lone surrogates (unencodable) as U+FFFD.
_CONTROL_PICTURES = {c: 0x2400 + c for c in range(32)} | {127: 0x2421} | {c: 0xFFFD for c in range(0xD800, 0xE000)}


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def render(d: Diagnostic, source: str | None, color: bool = False) -> str:
    where = f"{d.span}: " if d.span else ""
    head = _paint(f"{d.severity}[{d.code}]", "1;31" if d.severity == "error" else "1;33", color)
    out = [f"{where}{head}: {_visible(d.message)}\n"]
    if d.span and source is not None:
        lines = source.split("\n")  # as the lexer counts lines (splitlines() would also split at \f, \x1c...)
        if 1 <= d.span.line <= len(lines):
            text = _visible(lines[d.span.line - 1])
            gutter = f"{d.span.line:>5} | "
            width = max(1, (d.span.end_col - d.span.col) if d.span.end_line == d.span.line else len(text) - d.span.col + 1)
            out.append(f"{gutter}{text}\n")
            out.append(" " * (len(gutter) - 2) + "| " + " " * (d.span.col - 1) + _paint("^" * width, "1;32", color) + "\n")
    if d.help:
        out.append(f"      = help: {_visible(d.help)}\n")
    return "".join(out)
