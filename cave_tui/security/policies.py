"""The named policies: `trusted`, `standard` and `strict`.

`standard` stays out of everyday work (files, os, pickles of your own data pass) and stops
what hides code from the check (eval/exec, dunder attributes, magics) and, when the kernel
is not sandboxed, shells and destruction outside the working folder (`harm_rules`).
`strict` is an allow-list that closes the
escape classes a syntax check can close (docs/security.md lists the ones it cannot),
while leaving ordinary pandas/numpy/matplotlib analysis alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from cave_tui.security import lists as L
from cave_tui.security.dynamic_rules import AttrGetterRule, ClassFactoryRule, DispatchNameRule
from cave_tui.security.harm_rules import DestructionRule, ShellRule
from cave_tui.security.io_rules import DeserializationRule, IORule
from cave_tui.security.lenient_rules import LiteralNameRule, QueryTextRule
from cave_tui.security.module_rules import HostRule, ModuleRule
from cave_tui.security.name_rules import HookRule, NameRule, StringRule
from cave_tui.security.reflection_rules import FormatRule, QueryRule, ReflectionRule
from cave_tui.security.resolve import ModuleResolver
from cave_tui.security.resource_rules import ConstantSizeRule
from cave_tui.security.rules import AttributeRule, FunctionRule, ImportRule


class Policy(StrEnum):
    """The named policies, weakest first."""

    TRUSTED = "trusted"
    STANDARD = "standard"
    STRICT = "strict"


POLICIES: tuple[str, ...] = tuple(p.value for p in Policy)


@dataclass(frozen=True)
class PolicySpec:
    """What a `SecurityChecker` for one named policy is built from."""

    policy: Policy
    rules: tuple[Any, ...] = ()
    magics: bool = False
    summary: str | None = None
    resolver: ModuleResolver | None = None


_MODULE_NAME = re.compile(r"^[A-Za-z]\w*(\.[A-Za-z]\w*)*$")


def _extras(extra_imports: Iterable[str]) -> list[str]:
    if isinstance(extra_imports, str):
        extra_imports = [extra_imports]
    extras = []
    for item in extra_imports:
        name = str(item).strip()
        if not _MODULE_NAME.match(name):
            raise ValueError(f"extra import {item!r} is not a module name")
        extras.append(name)
    return extras


def policy_spec(
    name: str, extra_imports: Iterable[str] = (), *, sandboxed: bool = False
) -> PolicySpec:
    """The rules of the policy called *name* (any case); ValueError for an unknown name.

    *sandboxed*: the kernel runs in the OS sandbox, which is then the boundary; `standard`
    drops its shell and destruction rules there (strict is the same in every mode).
    """
    try:
        policy = Policy(str(name).strip().lower())
    except ValueError:
        raise ValueError(
            f"unknown security policy {name!r}; choose one of: {', '.join(POLICIES)}"
        ) from None
    extras = _extras(extra_imports)
    if policy is Policy.TRUSTED:
        return PolicySpec(policy, magics=True)
    if policy is Policy.STANDARD:
        return _standard(extras, sandboxed)
    return _strict(extras)


def _standard(extras: list[str], sandboxed: bool) -> PolicySpec:
    denied = set(L.STANDARD_DENIED_IMPORTS)
    if sandboxed:
        denied -= L.SANDBOX_CONTAINED_MODULES
    else:
        denied |= L.SHELL_MODULES
    denied -= {e.split(".")[0] for e in extras}
    module_names = {
        m
        for m in denied
        if not m.startswith("_") and "." not in m and m not in L.COLUMN_LIKE_MODULE_NAMES
    }
    rules: list[Any] = [
        ImportRule(denied, exceptions=L.STANDARD_ALLOWED_SUBMODULES),
        FunctionRule(L.STANDARD_FORBIDDEN_FUNCTIONS, match_attributes=False),
        AttributeRule(
            L.INTROSPECTION_ATTRIBUTES
            | L.CODE_ATTRIBUTES
            | L.SYS_HOOK_ATTRIBUTES
            | (L.RUNTIME_ATTRIBUTES - {"execute"})  # con.execute() is ordinary here
            | module_names
            | (set() if sandboxed else {"ctypeslib"}),
            dunder=True,
        ),
        NameRule(),
        HookRule(),
        DeserializationRule(pickles=False),
        StringRule(strict=False),
        HostRule(),
        ConstantSizeRule(),
        LiteralNameRule(),
        QueryTextRule(),
    ]
    if not sandboxed:
        rules += [ShellRule(), DestructionRule()]
    where = (
        "sandboxed kernel: the sandbox is the boundary"
        if sandboxed
        else "no shells or programs; no deletes, moves or writes outside the working folder"
    )
    summary = (
        f"Security policy: standard (files, os, pathlib, shutil and pickles of your own data "
        f"are fine; {where}; no eval/exec/compile, no dunder attributes, no ctypes/importlib, "
        "no IPython magics or shell commands)."
    )
    return PolicySpec(Policy.STANDARD, tuple(rules), summary=summary)


def _strict(extras: list[str]) -> PolicySpec:
    allowed = L.STRICT_ALLOWED_IMPORTS | {e.split(".")[0] for e in extras}
    resolver = ModuleResolver(frozenset(allowed), L.STRICT_DENIED_SUBMODULES)
    resolver.warm_up()
    extra_tops = {e.split(".")[0] for e in extras}
    attributes = AttributeRule(
        (
            L.INTROSPECTION_ATTRIBUTES
            | L.CODE_ATTRIBUTES
            | L.RUNTIME_ATTRIBUTES
            | L.MODULE_ATTRIBUTES
            | L.CAPABILITY_ATTRIBUTES
        )
        - extra_tops,
        private=True,
        substrings=L.CAPABILITY_SUBSTRINGS,
    )
    query, io_rule = QueryRule(), IORule()
    rules = [
        # `from pandas import eval as pe` is checked like `pd.eval`, and so on.
        ImportRule(
            allowed=allowed, resolver=resolver, attribute_rules=[attributes, query, io_rule]
        ),
        FunctionRule(L.STRICT_FORBIDDEN_FUNCTIONS, match_attributes=False),
        attributes,
        NameRule(strict=True),
        ReflectionRule(),
        AttrGetterRule(),
        DispatchNameRule(),
        ClassFactoryRule(),
        FormatRule(),
        query,
        ModuleRule(resolver, {e: e for e in extras}),
        io_rule,
        DeserializationRule(),
        HookRule(strict=True),
        StringRule(),
        HostRule(),
        ConstantSizeRule(),
    ]
    shown = ", ".join(
        ["numpy", "pandas", "pyarrow", "scipy", "matplotlib", "math", "json", "re", "datetime",
         "time", "collections", *sorted(extra_tops)]
    )  # fmt: skip
    summary = (
        f"Security policy: strict (imports limited to {shown}, …; files: read by literal "
        "relative path, write to io.BytesIO/StringIO; no network; no names starting with _; "
        "literal names in getattr/attrgetter and df.query/eval)."
    )
    return PolicySpec(Policy.STRICT, tuple(rules), summary=summary, resolver=resolver)
