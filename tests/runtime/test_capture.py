"""Routing a cell thread's prints to its capture (runtime/capture.py)."""

import io
import sys
import threading

from cave_tui.runtime.capture import OutputCapture, routed_streams


def test_a_cell_is_captured_when_the_streams_were_swapped_while_another_cell_runs():
    entered, release = threading.Event(), threading.Event()

    def stuck_cell() -> None:  # a cell that no interrupt reaches, still inside its capture
        with routed_streams(OutputCapture()):
            entered.set()
            release.wait(5)

    stuck = threading.Thread(target=stuck_cell)
    stuck.start()
    entered.wait(5)
    original, swapped = sys.stdout, io.StringIO()
    sys.stdout = swapped  # a test runner's capture, put in meanwhile
    try:
        capture = OutputCapture()
        with routed_streams(capture):
            print("mine")
        assert capture.getvalue() == "mine\n"
        assert swapped.getvalue() == ""
        release.set()
        stuck.join(5)
        assert sys.stdout is swapped  # the last cell out gives the streams back as found
    finally:
        release.set()
        stuck.join(5)
        sys.stdout = original
