"""Reliability: the real `cave run`, `cave --plain` and kernel under bad input and faults."""
