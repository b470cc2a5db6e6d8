"""Observation shaping: what the model reads after a cell ran.

Output over the limit keeps its head and tail with a marker saying how much
was elided (upstream dropped it all, tracebacks included). An error always
keeps its exception line: the output is cut first, then the traceback's middle.
"""

from __future__ import annotations

from cave_tui.runtime.base import ExecutionResult

HEAD_SHARE = 0.6


def cut_middle(text: str, limit: int) -> str:
    """*text* within about *limit* chars: head + marker + tail."""
    if limit <= 0 or len(text) <= limit:
        return text
    elided = len(text) - limit
    marker = f"\n[… {elided:,} characters elided …]\n"
    head = int(limit * HEAD_SHARE)
    tail = limit - head
    head_text = text[:head]
    # Prefer to cut at line boundaries when one is near.
    nl = head_text.rfind("\n")
    if nl > head * 0.8:
        head_text = head_text[:nl]
    tail_text = text[-tail:] if tail > 0 else ""
    nl = tail_text.find("\n")
    if 0 <= nl < tail * 0.2:
        tail_text = tail_text[nl + 1 :]
    elided = len(text) - len(head_text) - len(tail_text)
    marker = f"\n[… {elided:,} characters elided …]\n"
    return head_text + marker + tail_text


def _changed_note(result: ExecutionResult) -> str:
    parts = []
    if result.changed:
        parts.append("changed: " + ", ".join(result.changed[:20]))
    if result.deleted:
        parts.append("deleted: " + ", ".join(result.deleted[:20]))
    return f"[{'; '.join(parts)}]" if parts else ""


def shape_result(result: ExecutionResult, limit: int) -> str:
    """The observation message for one cell."""
    notice = f"[runtime: {result.notice}]\n" if result.notice else ""
    changed = _changed_note(result)
    if result.blocked:
        lines = ["Blocked by the security policy; the code did not run:"]
        for v in result.security_violations:
            lines.append(f"- {v}")
        lines.append("Rewrite the code without it.")
        return notice + "\n".join(lines)
    output = result.output.rstrip("\n")
    if result.success:
        body = "Output:\n" + cut_middle(output, limit) if output else "Ran OK, no output."
        return notice + body + (f"\n{changed}" if changed else "")
    error = (result.error or "error").rstrip("\n")
    error_budget = max(limit // 2, 400)
    error_text = error if len(error) <= error_budget else _cut_traceback(error, error_budget)
    out_budget = max(limit - len(error_text), 0)
    body = ""
    if output:
        body = "Output:\n" + cut_middle(output, out_budget) + "\n"
    body += "Error:\n" + error_text
    return notice + body + (f"\n{changed}" if changed else "")


def _cut_traceback(error: str, limit: int) -> str:
    """Keep the last line (the exception) whole and the innermost frames."""
    lines = error.splitlines()
    last = lines[-1] if lines else error
    if len(last) >= limit:
        return cut_middle(last, limit)
    rest = "\n".join(lines[:-1])
    return cut_middle(rest, limit - len(last) - 1) + "\n" + last


def repeated_failure_note(error_type: str | None) -> str:
    kind = error_type or "an error"
    return (
        f"This is the same code that just failed ({kind}); it was not run again. "
        "Fix the cause or take a different approach."
    )
