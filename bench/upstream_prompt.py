"""Upstream CaveAgent's default prompt, for side-by-side figures.

`UPSTREAM_INSTRUCTIONS`, `UPSTREAM_SYSTEM_INSTRUCTIONS` and `UPSTREAM_TEMPLATE` are upstream's
DEFAULT_INSTRUCTIONS, DEFAULT_SYSTEM_INSTRUCTIONS and DEFAULT_SYSTEM_PROMPT_TEMPLATE (with its
{functions}/{variables}/{types}/{skills} placeholders). `upstream_sections()` renders injected
items the way upstream's `Variable/Function/Type.__str__` do (`- name: x` / `  type: DataFrame`
/ `  description: ...`). `UPSTREAM_SYSTEM` is the prompt with an empty runtime.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

UPSTREAM_INSTRUCTIONS = "You are a Python code execution agent. You solve tasks by writing and executing Python code using the provided functions, variables, and their methods."

UPSTREAM_SYSTEM_INSTRUCTIONS = """\
- You solve tasks by writing and executing Python code using the provided functions, variables, and their methods.
- Carefully read and analyze the user's input.
- If the task requires Python code:
  - Generate appropriate Python code to address the user's request.
  - Your code will then be executed in a Python environment, and the execution result will be returned to you as input for the next step.
  - During each intermediate step, you can use 'print()' to save whatever important information you will then need in the following steps.
  - These print outputs will then be given to you as input for the next step.
  - Review the result and generate additional code as needed until the task is completed.
- CRITICAL EXECUTION CONTEXT: You are operating in a persistent Jupyter-like environment where:
  - Each code block you write is executed in a new cell within the SAME continuous session
  - ALL variables, functions, and imports persist across cells automatically
  - You can directly reference any variable created in previous cells without using locals(), globals(), or any special access methods
- If the task doesn't require Python code, provide a direct answer based on your knowledge.
- Always provide your final answer in plain text, not as a code block.
- You must not perform any calculations or operations yourself, even for simple tasks like sorting or addition.
- Write your code in a {python_block_identifier} code block. In each step, write all your code in only one block.
- Never predict, simulate, or fabricate code execution results.
- To solve the task, you must plan forward to proceed in a series of steps, in a cycle of Thought and Code sequences.
- Use ONLY the provided functions, variables, and types to complete tasks. Do not assume other tools exist.
- Example usage:
```{python_block_identifier}
# Call a function
result = add(5, 3)
print(f"Result: {{result}}")

# Use a variable's methods (check <types> for available methods)
processed = processor.process_list(data)
print(f"Processed: {{processed}}")
```"""

UPSTREAM_TEMPLATE = """
{instructions}

{system_instructions}

You have access to:

<functions>
{functions}
</functions>

<variables>
{variables}
</variables>

<types>
{types}
</types>

<skills>
{skills}
</skills>
"""


def _render(template: str, **values: str) -> str:
    return template.format(**values)


UPSTREAM_SYSTEM = _render(
    UPSTREAM_TEMPLATE,
    instructions=UPSTREAM_INSTRUCTIONS,
    system_instructions=UPSTREAM_SYSTEM_INSTRUCTIONS.replace(
        "{python_block_identifier}", "python"
    ).format(),
    functions="",
    variables="",
    types="",
    skills="",
)


# -- upstream's rendering of injected items ----------------------------------------------------


def _annotation(hint: Any) -> str:
    if hint is inspect.Parameter.empty:
        return ""
    if isinstance(hint, str):
        return hint
    return getattr(hint, "__name__", str(hint).replace("typing.", ""))


def _variable(name: str, value: Any, description: str | None) -> str:
    parts = [f"- name: {name}", f"  type: {type(value).__name__}"]
    if description:
        parts.append(f"  description: {description}")
    return "\n".join(parts)


def _function(name: str, func: Any, description: str | None, include_doc: bool) -> str:
    prefix = "async " if inspect.iscoroutinefunction(func) else ""
    try:
        sig = str(inspect.signature(func))
    except (TypeError, ValueError):
        sig = "(...)"
    parts = [f"- function: {prefix}{name}{sig}"]
    if description:
        parts.append(f"  description: {description}")
    doc = (func.__doc__ or "").strip() if include_doc else ""
    if doc:
        parts.append("  doc:")
        parts.extend(f"    {line}" for line in doc.split("\n"))
    return "\n".join(parts)


def _type(cls: type, description: str | None, include_doc: bool) -> str:
    """Upstream's schema of a plain class: its public methods with signatures and docs."""
    methods = []
    for name, method in inspect.getmembers(cls, predicate=inspect.isfunction):
        if name.startswith("_"):
            continue
        try:
            sig = inspect.signature(method)
        except (TypeError, ValueError):
            continue
        params = []
        for pname, param in sig.parameters.items():
            if pname == "self":
                continue
            text = pname
            if param.annotation is not inspect.Parameter.empty:
                text += f": {_annotation(param.annotation)}"
            if param.default is not inspect.Parameter.empty:
                text += f" = {param.default!r}"
            params.append(text)
        ret = ""
        if sig.return_annotation is not inspect.Signature.empty:
            ret = f" -> {_annotation(sig.return_annotation)}"
        entry = f"    - {name}({', '.join(params)}){ret}"
        if include_doc and method.__doc__ and method.__doc__.strip():
            entry += f"\n        {method.__doc__.strip()}"
        methods.append(entry)
    if not methods:
        return ""
    lines = [f"{cls.__name__}:"]
    if description:
        lines.append(f"  description: {description}")
    if include_doc and cls.__doc__ and cls.__doc__.strip():
        lines.append(f"  doc: {cls.__doc__.strip()}")
    lines.append("  methods:")
    lines.extend(methods)
    return "\n".join(lines)


def upstream_sections(items: Iterable[Any]) -> dict[str, str]:
    """`{functions}`, `{variables}`, `{types}` rendered from injected items, as upstream does.

    Only what the host injected is listed (upstream never lists names the model creates).
    """
    from cave_tui.runtime.items import Function, Type, Variable

    functions, variables, types = [], [], []
    for item in items:
        if isinstance(item, Function):
            functions.append(_function(item.name, item.func, item.description, item.include_doc))
        elif isinstance(item, Type):
            if item.include_schema:
                text = _type(item.value, item.description, item.include_doc)
                if text:
                    types.append(text)
        elif isinstance(item, Variable):
            variables.append(_variable(item.name, item.value, item.description))
    return {
        "functions": "\n".join(functions),
        "variables": "\n".join(variables),
        "types": "\n\n".join(types),
    }
