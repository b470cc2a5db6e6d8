"""Data in and out of a runtime: load files by format, save objects by type, dump namespaces.

Headless and runtime-agnostic: it only uses the `Runtime` interface (`inject`,
`retrieve`, `persistable`, `delete`, and `execute` to import modules and run
definitions). Heavy libraries (pandas, pyarrow, numpy) are imported only when a
file is actually read or written.
"""

from __future__ import annotations

from cave_tui.dataio.atomic import atomic_path, atomic_write_bytes, atomic_write_text
from cave_tui.dataio.checkpoint import checkpoint_namespace
from cave_tui.dataio.dump import (
    DumpResult,
    LoadedDump,
    dump_namespace,
    load_dump,
    read_dump,
    read_manifest,
    resolve_dump_dir,
)
from cave_tui.dataio.errors import (
    DataIOError,
    FileExistsConflict,
    InvalidNameError,
    LiveObjectError,
    LoadCancelled,
    NameConflictError,
    TrustRequiredError,
)
from cave_tui.dataio.formats import FORMATS, Format, detect_format
from cave_tui.dataio.inject import (
    Injection,
    InjectSpec,
    content_sha256,
    inject_file,
    inject_lazy,
    inject_package,
    inject_spec,
    load_package_data,
    parse_inject_spec,
)
from cave_tui.dataio.load import Loaded, describe_value, file_sha256, load_file, load_file_async
from cave_tui.dataio.names import check_name, identifier_from, name_from_path
from cave_tui.dataio.progress import Progress
from cave_tui.dataio.save import Saved, preferred_format, save_object, target_for

__all__ = [
    "FORMATS",
    "DataIOError",
    "DumpResult",
    "FileExistsConflict",
    "Format",
    "InjectSpec",
    "Injection",
    "InvalidNameError",
    "LiveObjectError",
    "LoadCancelled",
    "Loaded",
    "LoadedDump",
    "NameConflictError",
    "Progress",
    "Saved",
    "TrustRequiredError",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_name",
    "checkpoint_namespace",
    "content_sha256",
    "describe_value",
    "detect_format",
    "dump_namespace",
    "file_sha256",
    "identifier_from",
    "inject_file",
    "inject_lazy",
    "inject_package",
    "inject_spec",
    "load_dump",
    "load_file",
    "load_file_async",
    "load_package_data",
    "name_from_path",
    "parse_inject_spec",
    "preferred_format",
    "read_dump",
    "read_manifest",
    "resolve_dump_dir",
    "save_object",
    "target_for",
]
