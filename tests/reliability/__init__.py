"""Reliability: the real `cave run`, `cave --plain` and kernel runtime under bad input
and faults."""
