"""A library the kernel does not have: what to tell a model that imports it.

A cell cannot install a package (the sandbox has no network), and a small model imports the
missing library again and again, or calls a function whose import failed. The hint says so,
and, for the statistics functions such a model reaches for most, names the pandas or numpy
expression that computes the same (on Series `x` and `y`).
"""

from __future__ import annotations

import re

# function name -> the pandas / numpy expression that computes the same
EQUIVALENTS: dict[str, str] = {
    "pearsonr": "x.corr(y), one number (no p-value to unpack)",
    "spearmanr": "x.corr(y, method='spearman'), one number (no p-value to unpack)",
    "kendalltau": "x.corr(y, method='kendall'), one number (no p-value to unpack)",
    "zscore": "(x - x.mean()) / x.std(ddof=0)",
    "linregress": "np.polyfit(x, y, 1) (slope, intercept)",
    "skew": "x.skew()",
    "kurtosis": "x.kurt()",
    "sem": "x.sem()",
    "iqr": "x.quantile(0.75) - x.quantile(0.25)",
    "mode": "x.mode()",
    "trim_mean": "x[x.between(x.quantile(p), x.quantile(1 - p))].mean()",
    "gmean": "np.exp(np.log(x).mean())",
    "hmean": "len(x) / (1 / x).sum()",
    "mean_squared_error": "((x - y) ** 2).mean()",
    "mean_absolute_error": "(x - y).abs().mean()",
    "r2_score": "1 - ((x - y) ** 2).sum() / ((x - x.mean()) ** 2).sum() (x the truth)",
}
_CALLED = re.compile(r"(?<![\w.])(?:\w+\.)*(\w+)\s*\(")
NO_MODULE = re.compile(r"No module named '(?P<module>[\w.]+)'")
NOT_DEFINED = re.compile(r"name '(?P<name>\w+)' is not defined")


def equivalents(code: str) -> list[str]:
    """The known functions *code* calls, each with what computes it instead."""
    called = dict.fromkeys(match.group(1) for match in _CALLED.finditer(code))
    return [f"{name}: {EQUIVALENTS[name]}" for name in called if name in EQUIVALENTS]


def module_hint(module: str, code: str = "") -> str:
    """The hint for *module* missing in the kernel, with the equivalents of what *code*
    calls from it."""
    top = module.split(".")[0]
    hint = (
        f"`{top}` is not installed here, and a cell cannot install it: do this without it "
        "(pandas, numpy or the standard library); do not import it again."
    )
    return _with_equivalents(hint, code)


def undefined_hint(error: str) -> str | None:
    """For a NameError's line: a known function called without its import (which failed,
    or was dropped), and what computes it instead; None for any other name."""
    undefined = NOT_DEFINED.search(error)
    name = undefined["name"] if undefined else ""
    if name not in EQUIVALENTS:
        return None
    return f"`{name}` is not defined: compute it without it. {name}: {EQUIVALENTS[name]}."


def _with_equivalents(hint: str, code: str) -> str:
    found = equivalents(code)
    return f"{hint} Instead: {'; '.join(found)}." if found else hint
