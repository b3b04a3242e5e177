"""The UB plan of a kernel: the bytes of unified buffer one vector core takes, phase by phase, as a formula over the
tiling data, which the host tiling checks against the core's UB and the tests evaluate in Python.

A family's kernel part builds its plan (:class:`Plan`) from the quantities its kernel sizes its buffers by (the
spec's dims and attributes, the lowering's calc slots); :func:`render_cpp` writes it as one inline function of the
host tiling source (op_host/op_tiling/<op>_tiling.cpp, host code), which the generated tiling calls after it knows the UB size (``GetCoreMemSize``), and
:func:`evaluate` gives the same numbers from a dict of those quantities. Each buffer is a whole number of 32-byte
blocks, as ``TPipe::InitBuffer`` gives it (the twin, ``opgen/sim/include/opgen_sim/tensor.h``, the same).

The expressions are unsigned 64-bit throughout: numbers, tiling fields, sums, products, ``AlignUp`` / ``CeilDiv``
by a constant, maxima and selections by a comparison.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

UB_BLOCK = 32  # TPipe::InitBuffer rounds every buffer up to whole 32-byte blocks


class U:
    """An unsigned expression over tiling fields."""

    def __add__(self, other) -> "U":
        return Sum((self, lift(other)))

    def __radd__(self, other) -> "U":
        return Sum((lift(other), self))

    def __mul__(self, other) -> "U":
        return Prod((self, lift(other)))

    def __rmul__(self, other) -> "U":
        return Prod((lift(other), self))


def lift(x) -> U:
    if isinstance(x, U):
        return x
    if isinstance(x, int) and x >= 0:
        return Num(x)
    raise TypeError(f"a UB plan term is an unsigned integer or an expression, not {x!r}")


@dataclass(frozen=True)
class Num(U):
    value: int

    def cpp(self) -> str:
        return f"{self.value}ULL"

    def eval(self, env: dict) -> int:
        return self.value


@dataclass(frozen=True)
class Field(U):
    """A field of the tiling data (``t.<name>``); ``env[name]`` in Python."""
    name: str

    def cpp(self) -> str:
        return f"static_cast<uint64_t>(t.{self.name})"

    def eval(self, env: dict) -> int:
        v = int(env[self.name])
        if v < 0:
            raise ValueError(f"UB plan field {self.name} is {v}: the plan is over unsigned quantities")
        return v


@dataclass(frozen=True)
class Atom(U):
    """A C++ expression over the tiling data ``t`` (a test's ``bool`` counts 0 or 1); ``env[key]`` in Python."""
    text: str
    key: str

    def cpp(self) -> str:
        return f"static_cast<uint64_t>({self.text})"

    def eval(self, env: dict) -> int:
        return int(env[self.key])


@dataclass(frozen=True)
class Param(U):
    """A parameter of the plan's function (the core index ``core``); ``env[name]`` in Python."""
    name: str

    def cpp(self) -> str:
        return self.name

    def eval(self, env: dict) -> int:
        return int(env[self.name])


@dataclass(frozen=True)
class Sum(U):
    terms: tuple

    def cpp(self) -> str:
        return "(" + " + ".join(t.cpp() for t in self.terms) + ")"

    def eval(self, env: dict) -> int:
        return sum(t.eval(env) for t in self.terms)


@dataclass(frozen=True)
class Prod(U):
    terms: tuple

    def cpp(self) -> str:
        return "(" + " * ".join(t.cpp() for t in self.terms) + ")"

    def eval(self, env: dict) -> int:
        out = 1
        for t in self.terms:
            out *= t.eval(env)
        return out


@dataclass(frozen=True)
class AlignUp(U):
    x: U
    n: int

    def cpp(self) -> str:
        return f"(({self.x.cpp()} + {self.n - 1}ULL) / {self.n}ULL * {self.n}ULL)"

    def eval(self, env: dict) -> int:
        return -(-self.x.eval(env) // self.n) * self.n


@dataclass(frozen=True)
class CeilDiv(U):
    x: U
    n: U

    def cpp(self) -> str:
        return f"(({self.x.cpp()} + {self.n.cpp()} - 1ULL) / {self.n.cpp()})"

    def eval(self, env: dict) -> int:
        n = self.n.eval(env)
        if n == 0:
            raise ZeroDivisionError("UB plan: CeilDiv by 0")
        return -(-self.x.eval(env) // n)


@dataclass(frozen=True)
class Max(U):
    terms: tuple

    def cpp(self) -> str:
        out = self.terms[0].cpp()
        for t in self.terms[1:]:
            out = f"UbMax({out}, {t.cpp()})"
        return out

    def eval(self, env: dict) -> int:
        return max(t.eval(env) for t in self.terms)


CMP = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b}


@dataclass(frozen=True)
class If(U):
    """``then`` where ``lhs OP rhs`` (every given pair holds), else ``orelse``."""
    tests: tuple  # ((lhs, op, rhs), ...), all of which must hold
    then: U
    orelse: U

    def cpp(self) -> str:
        test = " && ".join(f"({a.cpp()} {op} {b.cpp()})" for a, op, b in self.tests)
        return f"(({test}) ? {self.then.cpp()} : {self.orelse.cpp()})"

    def eval(self, env: dict) -> int:
        ok = all(CMP[op](a.eval(env), b.eval(env)) for a, op, b in self.tests)
        return self.then.eval(env) if ok else self.orelse.eval(env)


def when(tests, then, orelse=0) -> U:
    """``then`` where every test holds, else ``orelse`` (folded where the tests or the branches are constants)."""
    tests = tuple((lift(a), op, lift(b)) for a, op, b in tests)
    then, orelse = lift(then), lift(orelse)
    if then == orelse:
        return then
    known = [CMP[op](a.value, b.value) for a, op, b in tests if isinstance(a, Num) and isinstance(b, Num)]
    if False in known:
        return orelse
    tests = tuple(t for t in tests if not (isinstance(t[0], Num) and isinstance(t[2], Num)))
    return If(tests, then, orelse) if tests else then


@dataclass(frozen=True)
class Let(U):
    """A named part of the plan (``const uint64_t name`` of the C++ function, before the phases)."""
    name: str
    value: U

    def cpp(self) -> str:
        return self.name

    def eval(self, env: dict) -> int:
        return self.value.eval(env)


def block(x) -> U:
    """One buffer of ``x`` bytes as InitBuffer gives it: whole 32-byte blocks."""
    return AlignUp(lift(x), UB_BLOCK)


@dataclass(frozen=True)
class Phase:
    """What one stretch of the kernel between two TPipe resets holds in UB at once: (buffer name, bytes) each."""
    name: str
    buffers: tuple

    def bytes(self) -> U:
        return Sum(tuple(b for _, b in self.buffers))


@dataclass(frozen=True)
class Plan:
    """A kernel's UB plan: its phases, the largest of which is what a core needs, and the named parts (Let) they
    share. A term may read the parameter ``core`` (Param): core 0 takes more in some kernels."""
    phases: tuple
    lets: tuple = ()  # the Let parts the phases use, each after those it uses


def evaluate(plan: Plan, env: dict) -> dict:
    """Phase name -> bytes, and "total": their maximum, for the quantities ``env`` (tiling field -> value)."""
    out = {p.name: p.bytes().eval(env) for p in plan.phases}
    out["total"] = max(out.values())
    return out


def render_cpp(plan: Plan, struct: str, fn: str) -> str:
    """The plan as ``inline uint64_t fn(const struct &t, uint64_t core)``: the UB bytes vector core ``core`` needs
    (the host tiling asks for each kind of core the plan tells apart)."""
    lines = [f"inline uint64_t {fn}(const {struct} &t, uint64_t core)", "{",
             "    const auto UbMax = [](uint64_t a, uint64_t b) { return a > b ? a : b; };"]
    phases = []
    for p in plan.phases:
        phases.append(f"    // {p.name}: {', '.join(n for n, _ in p.buffers)}")
        phases.append(f"    const uint64_t {p.name} = {p.bytes().cpp()};")
    # a let whose every use folded away on this op (a product-only quantity, e.g. CombineV3's block count with no
    # blockFlags) is left out: -Wunused-variable is an error in the op repository's builds
    lets: list[str] = []
    for let in reversed(plan.lets):
        if re.search(rf"\b{re.escape(let.name)}\b", "\n".join(lets + phases)):
            lets.insert(0, f"    const uint64_t {let.name} = {let.value.cpp()};")
    lines += lets + phases
    total = plan.phases[0].name
    for p in plan.phases[1:]:
        total = f"UbMax({total}, {p.name})"
    lines += ["    (void)core;", "    (void)UbMax;", f"    return {total};", "}"]
    return "\n".join(lines)
