"""The signs 0.8 reads as a prompt over the context window (HTTP 413, the Chinese
"exceeds the maximum length" wording) and an account out of credit ("credit balance too
low"): cave's classification reads them too, so compaction or a clear billing error
follows instead of a retry or a bare 400."""

from __future__ import annotations

import httpx

from cave_tui.models import PromptTooLongError, ProviderBillingError
from cave_tui.models.errors import classify_provider_error
from cave_tui.models.failures import is_billing_exhausted, is_context_length_exceeded


def test_http_413_is_a_prompt_too_long() -> None:
    import openai  # here: a second of every worker's collection

    request = httpx.Request("POST", "https://example.test/v1/chat/completions")
    error = openai.APIStatusError(
        "Payload Too Large", response=httpx.Response(413, request=request), body={}
    )
    assert is_context_length_exceeded(error)
    assert isinstance(classify_provider_error(error), PromptTooLongError)


def test_the_chinese_overflow_wording_is_a_prompt_too_long() -> None:
    assert is_context_length_exceeded(Exception("请求超过最大长度限制"))
    assert not is_context_length_exceeded(Exception("max_tokens must be positive"))


def test_a_credit_balance_too_low_is_billing() -> None:
    assert is_billing_exhausted(Exception("credit balance too low"))
    assert isinstance(
        classify_provider_error(Exception("credit balance too low")), ProviderBillingError
    )
