"""Reliability: the real `cave run`, `cave --plain` and the kernel under bad input and faults."""
