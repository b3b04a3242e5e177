"""An op family's code names parameters by role; an op may name some of them differently (``role R = N;``).

The family's code (drivers, world builders, kernels) is written against the role names, the spec's formulas and
every public surface (inputs, outputs, attributes, errors) against the op's names.  A role name is never another
parameter's name in the op (the front end's E132), so one mapping, role -> the op's name, translates every lookup
both ways: :class:`AliasMap` keeps the op's names as its keys and answers a role name too.
"""
from __future__ import annotations

from typing import Mapping

from opgen.runtime.errors import OpError


class AliasMap(dict):
    """A dict keyed by the op's names that also answers lookups and stores by role name (``aliases``: role ->
    the op's name).  Iteration yields the op's names."""

    __slots__ = ("aliases",)

    def __init__(self, data=(), aliases: Mapping[str, str] | None = None):
        super().__init__(data)
        self.aliases = dict(aliases or {})

    def _k(self, key):
        return self.aliases.get(key, key)

    def __getitem__(self, key):
        return super().__getitem__(self._k(key))

    def __setitem__(self, key, value):
        super().__setitem__(self._k(key), value)

    def __delitem__(self, key):
        super().__delitem__(self._k(key))

    def __contains__(self, key):
        return super().__contains__(self._k(key))

    def get(self, key, default=None):
        return super().get(self._k(key), default)

    def pop(self, key, *default):
        return super().pop(self._k(key), *default)

    def setdefault(self, key, default=None):
        return super().setdefault(self._k(key), default)

    def copy(self) -> "AliasMap":
        return AliasMap(self, self.aliases)


def aliased(mapping: Mapping | None, aliases: Mapping[str, str]):
    """``mapping`` answering role names too (itself when the op binds no role)."""
    if not aliases or mapping is None:
        return mapping
    return AliasMap(mapping, aliases)


def to_op_names(mapping: Mapping, aliases: Mapping[str, str]) -> dict:
    """A mapping keyed by role names re-keyed by the op's names."""
    return {aliases.get(k, k): v for k, v in mapping.items()}


def op_error(err: OpError, aliases: Mapping[str, str]) -> OpError:
    """An error the family's code raised about a role, about the op's parameter instead."""
    name = aliases.get(err.param)
    if name is None:
        return err
    return OpError(err.code, name, err.message.replace(err.param, name))
