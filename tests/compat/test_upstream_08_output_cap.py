"""0.8's `max_output_tokens=` on a model: the declared cap per reply, sent as the wire cap.

A wire cap given too (`max_tokens`, `max_completion_tokens`) must agree with it, and only
one wire spelling may be given; 0 is a cap like any other, not "none".
"""

from __future__ import annotations

import pytest

from cave_tui.models import LiteLLMModel, OpenAIModel


@pytest.mark.parametrize("cls", [LiteLLMModel, OpenAIModel])
def test_the_declared_cap_is_kept_and_sent(cls):
    model = cls("openai/m", max_output_tokens=0)
    assert model.max_output_tokens == 0
    assert model.kwargs["max_tokens"] == 0
    same = cls("openai/m", max_output_tokens=50, max_completion_tokens=50)
    assert same.max_output_tokens == 50 and same.kwargs == {"max_completion_tokens": 50}
    assert cls("openai/m").max_output_tokens is None
    assert cls("openai/m", max_tokens=70).max_output_tokens == 70


@pytest.mark.parametrize("cls", [LiteLLMModel, OpenAIModel])
def test_a_conflicting_or_doubled_wire_cap_is_refused(cls):
    with pytest.raises(ValueError, match="max_output_tokens"):
        cls("openai/m", max_output_tokens=50, max_tokens=100)
    with pytest.raises(ValueError, match="only one"):
        cls("openai/m", max_tokens=50, max_completion_tokens=50)
