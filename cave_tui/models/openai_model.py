"""`OpenAIServerModel`: upstream CaveAgent's model for an OpenAI-compatible endpoint.

Same constructor as upstream's (`model_id, base_url, api_key, organization,
project, **kwargs`), built on the light client `OpenAIHTTPModel` (httpx, no litellm), so it
streams, retries, counts usage and stops like every cave model.
"""

from __future__ import annotations

from typing import Any

from cave_tui.models.openai_http import OpenAIHTTPModel


class OpenAIServerModel(OpenAIHTTPModel):
    """A model behind the OpenAI API or any server that speaks it.

    *model_id* is sent as it is (an id such as `openai/gpt-4o` on a router stays
    whole). Without *base_url* or *api_key* the OpenAI client's environment
    variables apply, as upstream (`OPENAI_BASE_URL`, `OPENAI_API_KEY`). *organization* and
    *project* are sent as the OpenAI client sends them (`OpenAI-Organization`,
    `OpenAI-Project` headers). Extra keyword arguments go to the chat completion request,
    and cave's own options (`stream=`, `max_retries=`, ...) work as on `LiteLLMModel`.
    """

    def __init__(
        self,
        model_id: str,
        base_url: str | None = None,
        api_key: str | None = None,
        organization: str | None = None,
        project: str | None = None,
        filters_asynchronously: bool = False,  # upstream 0.8's; see LiteLLMModel
        **kwargs: Any,
    ) -> None:
        self.filters_asynchronously = filters_asynchronously
        headers = dict(kwargs.pop("extra_headers", None) or {})
        if organization is not None:
            headers.setdefault("OpenAI-Organization", organization)
        if project is not None:
            headers.setdefault("OpenAI-Project", project)
        super().__init__(
            model_id, api_base=base_url, api_key=api_key, extra_headers=headers, **kwargs
        )
        self.organization = organization
        self.project = project
        self.wire_model = model_id  # sent whole: no provider prefix is stripped
        self.kwargs = self.request_kwargs  # upstream's name
