"""Upstream's `cave_agent.parsing`: split a streamed reply into text and code segments."""

from cave_tui.parsing.streaming import Segment, SegmentType, StreamingTextParser

__all__ = ["Segment", "SegmentType", "StreamingTextParser"]
