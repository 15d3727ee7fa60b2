"""A small pydantic-like checker for JSON request bodies.

A schema is built from the kinds below; `check` walks a value and raises `SchemaError` for the
first mismatch, in pydantic's words (`Field required`, `Extra inputs are not permitted`, ...).
The error's path is assembled only when an error happens: each container prepends its key as
the exception travels up, so a valid 100K-token body costs no path strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# A field type is a string name ("str", "int", ...), Opt(...), ListOf(...), Literal(...), Obj(...),
# Tagged(...), Pattern(...), or a callable that checks the value and returns an error or None.


@dataclass(frozen=True)
class Obj:
    fields: dict[str, Any]
    required: frozenset[str] = frozenset()
    open: bool = False  # unknown keys allowed (types we accept but do not model)
    beta_fields: dict[str, frozenset[str]] = field(default_factory=dict)  # field -> betas that enable it


@dataclass(frozen=True)
class Tagged:
    """A union chosen by the `type` key; `in_path` puts the tag into error paths like pydantic."""

    variants: dict[str, Obj]
    in_path: bool = True
    beta_variants: dict[str, frozenset[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class ListOf:
    item: Any
    min_items: int = 0


@dataclass(frozen=True)
class Literal:
    values: tuple[Any, ...]
    # value -> the betas that allow it; without one of them the value is refused as unknown.
    beta_values: tuple[tuple[Any, frozenset[str]], ...] = ()


@dataclass(frozen=True)
class Pattern:
    regex: str


@dataclass(frozen=True)
class Opt:
    """A value that may also be null."""

    inner: Any


@dataclass(frozen=True)
class AnyOf:
    """`str | list[...]` style unions: the first member whose basic shape matches is used."""

    members: tuple[Any, ...]


@dataclass(frozen=True)
class Int:
    ge: int | None = None


def _literal_text(values: tuple[Any, ...]) -> str:
    quoted = [f"'{v}'" for v in values]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


class SchemaError(Exception):
    """The first problem found; containers prepend their key as the error travels up."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.parts: list[str | int] = []

    def text(self) -> str:
        path = ".".join(str(part) for part in self.parts)
        return f"{path}: {self.message}" if path else self.message


def _fail(message: str, *parts: str | int) -> None:
    err = SchemaError(message)
    err.parts.extend(parts)
    raise err


def _is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


_NAMED: dict[str, tuple[Any, str]] = {
    "str": (str, "Input should be a valid string"),
    "bool": (bool, "Input should be a valid boolean"),
    "dict": (dict, "Input should be a valid dictionary"),
}


def _check_named(value: Any, kind: str, betas: frozenset[str]) -> None:
    if kind == "any":
        return
    if kind in _NAMED:
        wanted, message = _NAMED[kind]
        if not isinstance(value, wanted):
            _fail(message)
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            _fail("Input should be a valid number")
    elif kind == "int":
        _check_int(value, Int(), betas)
    else:  # pragma: no cover - a schema typo, not a request problem
        raise TypeError(f"unknown schema kind {kind!r}")


def _check_opt(value: Any, kind: Opt, betas: frozenset[str]) -> None:
    if value is not None:
        check(value, kind.inner, betas)


def _check_int(value: Any, kind: Int, betas: frozenset[str]) -> None:
    if not _is_int(value):
        _fail("Input should be a valid integer")
    if kind.ge is not None and value < kind.ge:
        _fail(f"Input should be greater than or equal to {kind.ge}")


def _check_pattern(value: Any, kind: Pattern, betas: frozenset[str]) -> None:
    if not isinstance(value, str):
        _fail("Input should be a valid string")
    if not re.fullmatch(kind.regex, value):
        _fail(f"String should match pattern '{kind.regex}'")


def _check_literal(value: Any, kind: Literal, betas: frozenset[str]) -> None:
    gated = {v for v, enabled_by in kind.beta_values if not (enabled_by & betas)}
    allowed = tuple(v for v in kind.values if v not in gated)
    if value not in allowed or isinstance(value, bool) != isinstance(kind.values[0], bool):
        _fail(f"Input should be {_literal_text(allowed)}")


def _check_list(value: Any, kind: ListOf, betas: frozenset[str]) -> None:
    if not isinstance(value, list):
        _fail("Input should be a valid list")
    if len(value) < kind.min_items:
        _fail(f"List should have at least {kind.min_items} item after validation, not {len(value)}")
    item_kind = kind.item
    checker = _DISPATCH.get(type(item_kind), _check_callable)
    for i, item in enumerate(value):
        try:
            checker(item, item_kind, betas)
        except SchemaError as err:
            err.parts.insert(0, i)
            raise


def _check_any_of(value: Any, kind: AnyOf, betas: frozenset[str]) -> None:
    for member in kind.members:
        wanted = list if isinstance(member, ListOf) else _NAMED[member][0] if member in _NAMED else None
        if wanted is not None and isinstance(value, wanted):
            check(value, member, betas)
            return
    check(value, kind.members[-1], betas)


def _check_obj(value: Any, kind: Obj, betas: frozenset[str]) -> None:
    if not isinstance(value, dict):
        _fail("Input should be a valid dictionary")
    present = 0
    for name, sub in kind.fields.items():
        if name not in value:
            if name in kind.required:
                _fail("Field required", name)
            continue
        present += 1
        enabled_by = kind.beta_fields.get(name)
        if enabled_by is not None and not (enabled_by & betas):
            _fail("Extra inputs are not permitted", name)
        try:
            check(value[name], sub, betas)
        except SchemaError as err:
            err.parts.insert(0, name)
            raise
    if present != len(value) and not kind.open:
        for name in value:
            if name not in kind.fields:
                _fail("Extra inputs are not permitted", name)


def _check_tagged(value: Any, kind: Tagged, betas: frozenset[str]) -> None:
    if not isinstance(value, dict):
        _fail("Input should be a valid dictionary")
    if "type" not in value:
        _fail("Unable to extract tag using discriminator 'type'")
    tag = value["type"]
    gate = kind.beta_variants.get(tag) if isinstance(tag, str) else None
    if not isinstance(tag, str) or tag not in kind.variants or (gate is not None and not gate & betas):
        allowed = [
            t for t in kind.variants if not (kind.beta_variants.get(t) and not kind.beta_variants[t] & betas)
        ]
        expected = ", ".join(f"'{t}'" for t in allowed)
        _fail(f"Input tag '{tag}' found using 'type' does not match any of the expected tags: {expected}")
    try:
        _check_obj(value, kind.variants[tag], betas)
    except SchemaError as err:
        if kind.in_path:
            err.parts.insert(0, tag)
        raise


def _check_callable(value: Any, kind: Any, betas: frozenset[str]) -> None:
    kind(value, betas)


_DISPATCH: dict[type, Any] = {
    str: _check_named,
    Opt: _check_opt,
    Int: _check_int,
    Pattern: _check_pattern,
    Literal: _check_literal,
    ListOf: _check_list,
    AnyOf: _check_any_of,
    Obj: _check_obj,
    Tagged: _check_tagged,
}


def check(value: Any, kind: Any, betas: frozenset[str]) -> None:
    """Raise SchemaError for the first way `value` does not fit `kind`."""
    _DISPATCH.get(type(kind), _check_callable)(value, kind, betas)


def fail(message: str, *parts: str | int) -> None:
    """Raise a SchemaError from a custom check (a callable kind)."""
    _fail(message, *parts)


def check_object(value: Any, kind: Obj, betas: frozenset[str]) -> None:
    _check_obj(value, kind, betas)
