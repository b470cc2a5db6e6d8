"""Upstream 0.8's `cave_tui.compaction.tokens` (`estimate_tokens`, `TokenAnchor`,
`default_token_estimate`) over cave's counts, and 0.8's anchor rule: a list that shrank
below the anchored one is counted afresh, in the module and in `Compactor`."""

from __future__ import annotations

from cave_tui.compaction import Compactor
from cave_tui.compaction.tokens import TokenAnchor, default_token_estimate, estimate_tokens
from cave_tui.messages import UserMessage
from cave_tui.models import ScriptedModel
from cave_tui.models.tokens import count_text


def test_estimates_are_cave_counts_and_read_an_anchor() -> None:
    msgs = [UserMessage("hello world " * 50)]
    own = estimate_tokens(msgs)
    assert own >= count_text("hello world " * 50) > 0
    assert default_token_estimate("hello world") == count_text("hello world")
    assert default_token_estimate("") == 0
    assert estimate_tokens(msgs, TokenAnchor(5000, own)) == 5000
    grown = [*msgs, UserMessage("more " * 40)]
    assert estimate_tokens(grown, TokenAnchor(5000, own)) == 5000 + estimate_tokens(grown) - own
    assert estimate_tokens(msgs, token_estimator=len) == len("hello world " * 50)


def test_a_shrunken_list_is_counted_afresh() -> None:
    big = [UserMessage("x " * 2000)]
    small = [UserMessage("x " * 20)]
    anchor = TokenAnchor(50_000, estimate_tokens(big))
    assert estimate_tokens(small, anchor) == estimate_tokens(small)

    compactor = Compactor(ScriptedModel(["unused"]), context_window=100_000)
    anchor = compactor.anchor(big, 50_000)
    assert compactor.estimate_tokens(small, anchor=anchor) == compactor.estimate_tokens(small)
