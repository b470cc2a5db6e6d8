"""Where a dump or a session snapshot was written, and where its code came from.

A manifest records the runtime that wrote it (`Provenance`): code and pickles made where
cells run confined (a kernel, a sandboxed kernel) are loaded into a less confined runtime
(the in-process one runs in the host) only with trust. A definition's `DefinitionOrigin`
says whether its source is a cell the host sent (`SENT`) or only what the runtime reported
(`REPORTED`: code the host never sent, trusted like a pickle).
"""

from __future__ import annotations

import enum


class Provenance(enum.Enum):
    """The runtime a dump was written from, least confined first."""

    IN_PROCESS = "in-process"  # cells run in the host's own process
    KERNEL = "kernel"  # a kernel process, unsandboxed
    SANDBOXED_KERNEL = "sandboxed-kernel"  # a kernel under bubblewrap

    @property
    def confinement(self) -> int:
        """0 for the host itself; higher is more confined."""
        return list(Provenance).index(self)

    def escapes_into(self, target: Provenance) -> bool:
        """Whether running this dump's code in *target* gives it more than it had."""
        return target.confinement < self.confinement

    @property
    def label(self) -> str:
        return {
            Provenance.IN_PROCESS: "the in-process runtime",
            Provenance.KERNEL: "a kernel",
            Provenance.SANDBOXED_KERNEL: "a sandboxed kernel",
        }[self]


# A manifest from before the mark: where it ran is unknown, so its code is taken as a
# kernel's (it needs trust to run in the host).
UNMARKED = Provenance.KERNEL


class DefinitionOrigin(enum.Enum):
    """Where the source of a dumped function or class came from."""

    SENT = "sent"  # a cell the host sent to the runtime, rebuilt by the host
    REPORTED = "reported"  # only what the runtime said (exec of a string, a forged source)


def provenance_of(runtime: object) -> Provenance:
    """*runtime*'s `provenance`; the in-process one when it does not say (the least
    confined: loading into it asks the most)."""
    found = getattr(runtime, "provenance", None)
    return found if isinstance(found, Provenance) else Provenance.IN_PROCESS
