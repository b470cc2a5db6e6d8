"""The names the policies are built from, in one place so a reviewer can audit them.

Each set says in its comment which class of escape it closes. The checker never
imports anything to use these lists; `resolve.py` adds what real module objects say.
"""

from __future__ import annotations

import re

# -- imports ---------------------------------------------------------------------------------
# `standard` is a deny-list of what hides code from the checker or reaches the host's own
# machinery (issue 30: files, `os`, `sys`, `shutil` and pickles of your own data are
# everyday work and pass; what destroys is `harm_rules`' to judge).
STANDARD_DENIED_IMPORTS = frozenset(
    {
        "ctypes", "_ctypes", "cffi", "importlib", "imp", "zipimport", "marshal", "builtins",
        "posix", "nt", "_thread", "copyreg", "pdb", "bdb", "code", "codeop", "runpy",
        "IPython", "ipykernel", "jupyter_client", "webbrowser", "pydoc", "multiprocessing",
        "numpy.ctypeslib", "numpy.f2py", "numpy.distutils", "numpy.testing.extbuild",
    }
)  # fmt: skip
# Denied modules whose harm stays inside the process that imports them (native code,
# child processes, a browser or pager): `standard` lets them through in the sandbox.
SANDBOX_CONTAINED_MODULES = frozenset(
    {"ctypes", "_ctypes", "cffi", "multiprocessing", "webbrowser", "pydoc",
     "numpy.ctypeslib", "numpy.f2py", "numpy.distutils", "numpy.testing.extbuild"}
)  # fmt: skip
# Submodules of denied packages that notebooks import every day (`display`, `Markdown`).
STANDARD_ALLOWED_SUBMODULES = frozenset({"IPython.display"})
# Modules whose purpose is running programs: refused by `standard` when the kernel is not
# sandboxed (in the sandbox a program runs with no more reach than the cell itself).
SHELL_MODULES = frozenset(
    {"subprocess", "_posixsubprocess", "pty", "pexpect", "ptyprocess", "sh", "plumbum",
     "asyncio.subprocess", "commands", "popen2"}
)  # fmt: skip
# Denied module names that are also ordinary attribute names (`df.code`, `resp.code`,
# `cfg.commands`): `standard` refuses them as imports, not as `x.name`.
COLUMN_LIKE_MODULE_NAMES = frozenset({"code", "sh", "commands", "gc", "nt", "imp", "pdb", "bdb"})
# Functions that run a program or replace/duplicate the process, on any receiver
# (`os.system`, `posix.execv`, `asyncio.create_subprocess_shell`, `pd.io.common.os.popen`).
SHELL_FUNCTIONS = frozenset(
    {
        "system", "popen", "popen2", "popen3", "popen4", "fork", "forkpty", "startfile",
        "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe",
        "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp",
        "spawnvpe", "posix_spawn", "posix_spawnp", "create_subprocess_exec",
        "create_subprocess_shell", "subprocess_exec", "subprocess_shell", "getoutput",
        "getstatusoutput", "Popen", "check_output", "check_call",
    }
)  # fmt: skip
# Of those, names plausible as a data column (`df.system`): refused when called, or when
# reached from a module the cell can name.
AMBIGUOUS_SHELL_FUNCTIONS = frozenset({"system", "popen", "fork", "startfile"})
# Modules whose `system`/`popen`/`fork` run programs, and modules where those names only
# describe the machine (`platform.system()`).
PROCESS_MODULES = frozenset({"os", "posix", "nt", "subprocess", "pty", "commands", "popen2"})
OS_NAMING_MODULES = frozenset({"platform"})
# Signals to processes the cell did not start (the app, other programs).
# (`os._exit`/`os.abort` end the process at once: in process, that is the app itself.)
PROCESS_KILLERS = frozenset(
    {"os.kill", "os.killpg", "signal.pthread_kill", "signal.raise_signal", "os._exit",
     "os.abort", "posix._exit", "posix.abort", "posix.kill"}
)  # fmt: skip
# Modules whose members a computed name could turn into a shell or a delete.
HARM_MODULES = frozenset({"os", "shutil", "posix", "pathlib", "os.path", "sys", "asyncio"})

# `strict` is an allow-list (issue 3) plus io (BytesIO/StringIO for figures and CSV text),
# warnings (filterwarnings) and copy (deepcopy), which ordinary analysis cells use, and
# (issue 19) the small standard modules everyday cells import: time, contextlib, zoneinfo,
# abc, pprint and operator (whose attrgetter/methodcaller `AttrGetterRule` watches).
# Their dangerous members are in `DENIED_MEMBERS`.
STRICT_ALLOWED_IMPORTS = frozenset(
    {
        "math", "statistics", "json", "re", "datetime", "collections", "itertools",
        "functools", "decimal", "fractions", "random", "string", "textwrap", "typing",
        "dataclasses", "enum", "numpy", "pandas", "pyarrow", "scipy", "matplotlib",
        "io", "warnings", "copy", "time", "contextlib", "zoneinfo", "abc", "pprint",
        "operator",
    }
)  # fmt: skip
# `from __future__ import annotations` is a compiler switch, not a module the cell uses.
# barry_as_FLUFL changes the grammar (`<>`), so the checker and IPython would disagree.
FUTURE_MODULE = "__future__"
FUTURE_FEATURES = frozenset(
    {"annotations", "generator_stop", "division", "absolute_import", "print_function",
     "unicode_literals", "with_statement", "generators", "nested_scopes"}
)  # fmt: skip

# Submodules of allowed packages that reach native code, subprocesses, pickle, the file
# system or the network. Importing them, or reaching them by attribute, is refused.
STRICT_DENIED_SUBMODULES = frozenset(
    {
        "numpy.ctypeslib", "numpy.f2py", "numpy.distutils", "numpy.testing", "numpy.core",
        "pandas.io.clipboard", "pandas.io.clipboards", "pandas.io.pickle", "pandas.io.common",
        "pandas.io.sql", "pandas.compat.pickle_compat", "pandas.util._tester",
        # pandas' expression engine: `Expr(text)()` evaluates a string the cell computed,
        # past QueryRule. `pd.eval`/`df.query` use it internally and stay allowed.
        "pandas.core.computation.expr", "pandas.core.computation.engines",
        "pandas.core.computation.scope", "pandas.core.computation.ops",
        "pandas.core.computation.pytables", "pandas.core.computation.parsing",
        "pandas.core.computation.align", "pandas.core.computation.expressions",
        "pandas.core.computation.api", "pandas.core.computation.common",
        "pyarrow.cffi", "pyarrow.jvm", "pyarrow.fs", "pyarrow.hdfs", "pyarrow.flight",
        "pyarrow.plasma", "pyarrow.cuda", "pyarrow.dataset", "pyarrow.orc", "pyarrow.util",
        "pyarrow.tests", "pyarrow.substrait",
        "matplotlib.testing", "matplotlib.animation", "matplotlib.cbook",
        "matplotlib.dviread", "matplotlib.texmanager", "matplotlib.font_manager",
        "matplotlib.sphinxext", "matplotlib.backends.backend_webagg",
        "matplotlib.backends.backend_webagg_core", "matplotlib.backends.backend_nbagg",
        "scipy.io", "scipy.datasets", "scipy.misc", "scipy.weave",
    }
)  # fmt: skip

# Module-name fragments that are never allowed anywhere in a dotted import path.
DENIED_MODULE_WORDS = ("pickle", "marshal", "ctypes", "subprocess", "clipboard", "f2py")

# -- names -----------------------------------------------------------------------------------
# Builtins that run code from strings, import, reach the namespace or open the host's I/O.
STANDARD_FORBIDDEN_FUNCTIONS = frozenset(
    {
        "eval", "exec", "compile", "__import__", "breakpoint", "input",
        "get_ipython", "exit", "quit", "execfile", "runfile",
        "help", "license", "credits", "copyright",
    }
)  # fmt: skip
# strict also refuses the namespace readers and open() (issue 30: standard lets `open`,
# `globals()`, `vars(obj)` through; their dunder keys stay refused by StringRule).
STRICT_FORBIDDEN_FUNCTIONS = STANDARD_FORBIDDEN_FUNCTIONS | {
    "open", "globals", "locals", "vars", "reload", "__build_class__", "memoryview",
}  # fmt: skip

# Builtins that take an attribute name as a string; strict allows only direct calls with a
# constant name that would itself be allowed as `obj.name`.
REFLECTION_BUILTINS = {"getattr": (2, 3), "hasattr": (2, 2), "setattr": (3, 3), "delattr": (2, 2)}

# Dunder names strict allows as attributes (`super().__init__()`, `type(x).__name__`).
ALLOWED_DUNDER_ATTRIBUTES = frozenset(
    {"__init__", "__name__", "__qualname__", "__doc__", "__class__", "__module__"}
)
# Dunder names allowed as bare names (`if __name__ == "__main__":`) and as class-body stores.
ALLOWED_DUNDER_NAMES = frozenset({"__name__", "__doc__", "__slots__"})
ALLOWED_DUNDER_STRINGS = frozenset({"__main__"})

# Protocol methods an ordinary class may define. Anything else that is a dunder (pickle
# hooks such as __reduce__, attribute hooks, __array_interface__, __del__, ...) is refused.
ALLOWED_DUNDER_DEFS = frozenset(
    {
        "__init__", "__post_init__", "__new__", "__repr__", "__str__", "__format__",
        "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__",
        "__len__", "__iter__", "__next__", "__reversed__", "__contains__", "__getitem__",
        "__setitem__", "__delitem__", "__missing__", "__call__", "__enter__", "__exit__",
        "__aenter__", "__aexit__", "__aiter__", "__anext__",
        "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__",
        "__rmul__", "__imul__", "__matmul__", "__rmatmul__", "__truediv__", "__rtruediv__",
        "__itruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__divmod__",
        "__pow__", "__rpow__", "__neg__", "__pos__", "__abs__", "__invert__", "__round__",
        "__floor__", "__ceil__", "__trunc__", "__int__", "__float__", "__complex__",
        "__index__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__",
        "__lshift__", "__rshift__",
    }
)  # fmt: skip

# Pickle/copy hooks: the unpickler (a saved session, a deepcopy) calls what they return
# outside any check. Named in messages and refused by `standard` too.
PICKLE_HOOKS = frozenset(
    {
        "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__getnewargs__",
        "__getnewargs_ex__", "__copy__", "__deepcopy__", "__del__",
    }
)  # fmt: skip

# IPython's own history/namespace variables (single underscore), and `In`/`Out`, the same
# history lists under public names (refused when the cell does not bind them itself).
IPYTHON_PRIVATE_NAME = re.compile(r"^_(i{1,3}|i\d+|\d+|ih|oh|dh|sh|exit_code)$")
IPYTHON_HISTORY_NAMES = frozenset({"In", "Out"})

# -- attributes ------------------------------------------------------------------------------
# Frame, code and generator introspection: the way from any function or generator to the
# globals and builtins of whatever defined it (the host included).
INTROSPECTION_ATTRIBUTES = frozenset(
    {
        "gi_frame", "gi_code", "gi_yieldfrom", "gi_suspended", "cr_frame", "cr_code",
        "cr_await", "cr_origin", "ag_frame", "ag_code", "ag_await", "f_back", "f_globals",
        "f_locals", "f_builtins", "f_code", "f_trace", "f_lasti", "tb_frame", "tb_next",
        "tb_lasti", "func_globals", "func_code", "func_closure", "func_defaults", "im_func",
        "im_self", "im_class", "cell_contents",
    }
)  # fmt: skip
CODE_ATTRIBUTES = frozenset(
    {
        "co_code", "co_consts", "co_names", "co_varnames", "co_filename", "co_name",
        "co_qualname", "co_firstlineno", "co_lnotab", "co_linetable", "co_freevars",
        "co_cellvars", "co_flags", "co_argcount", "co_kwonlyargcount", "co_posonlyargcount",
        "co_nlocals", "co_stacksize", "co_exceptiontable", "co_lines", "co_positions",
    }
)  # fmt: skip

# `sys` and `gc` members that start a debugger, trace or hook every frame, or reach frames
# and objects: refused by `standard`, which lets `import sys`/`import gc` through for
# `sys.path`, `sys.version`, `sys.stdout`, `gc.collect()`.
SYS_HOOK_ATTRIBUTES = frozenset(
    {"breakpointhook", "settrace", "setprofile", "_getframe", "addaudithook", "call_tracing",
     "_current_frames", "monitoring", "remote_exec",
     # gc: `gc.collect()` is everyday; these reach every object of the process
     "get_objects", "get_referrers", "get_referents", "callbacks"}
)  # fmt: skip

# IPython and runtime plumbing reachable from injected objects (a sub-agent's runtime).
RUNTIME_ATTRIBUTES = frozenset(
    {
        "get_ipython", "run_line_magic", "run_cell_magic", "run_cell", "run_code",
        "getoutput", "user_ns", "user_global_ns", "security_checker", "shell", "execute",
        "api_key", "kernel_manager", "kernel_client",
    }
)  # fmt: skip

# Methods of another agent's runtime that run code or change what is checked.
RUNTIME_METHODS = frozenset(
    {"execute", "inject", "shell", "security_checker", "check_security", "reset", "delete"}
)

# Modules that allowed modules re-export by attribute (json.codecs, pandas.io.common.os,
# dataclasses.builtins, typing.sys, ...). Refused whatever the receiver, so they stay
# refused when the chain starts from a name the checker cannot resolve. Only names no data
# column would plausibly have: the resolver catches the rest (`typing.types`, `x.signal`).
MODULE_ATTRIBUTES = frozenset(
    {
        "os", "sys", "subprocess", "builtins", "bltns", "ctypes", "ctypeslib", "cffi", "ffi",
        "importlib", "imp", "pickle", "cPickle", "pickle_compat", "marshal", "shelve", "dill",
        "cloudpickle", "joblib", "copyreg", "shutil", "socket", "urllib", "urllib3",
        "requests", "ftplib", "smtplib", "webbrowser", "codecs", "pathlib", "tempfile",
        "mmap", "runpy", "pty", "tty", "termios", "fcntl", "posix", "posixpath", "ntpath",
        "genericpath", "gc", "inspect", "linecache", "pdb", "bdb", "faulthandler",
        "threading", "multiprocessing", "asyncio", "sysconfig", "pkgutil", "zipimport",
        "zipfile", "tarfile", "pydoc", "IPython", "ipykernel", "jupyter_client", "distutils",
        "setuptools", "f2py", "extbuild", "cbook", "texmanager", "dviread", "clipboard",
        "clipboards", "sphinxext", "_os", "_sys",
    }
)  # fmt: skip

# Functions and classes that open files, run programs, touch raw memory, import by name,
# evaluate strings or set attributes by name, whatever object they are reached from.
CAPABILITY_ATTRIBUTES = frozenset(
    {
        # processes and environment
        "popen", "Popen", "spawnv", "spawnl", "execv", "execve", "execvp", "execl", "fork",
        "execle", "execlp", "execlpe", "execvpe", "spawnle", "spawnlp", "spawnlpe", "spawnve",
        "spawnvp", "spawnvpe", "posix_spawn", "posix_spawnp", "startfile", "setuid", "setgid",
        "seteuid", "chroot", "fchmod", "fchown", "abort",
        "forkpty", "killpg", "environ", "getenv", "putenv", "unsetenv", "check_output",
        "check_call", "pipepager", "tempfilepager",
        # file system
        "read_text", "read_bytes", "write_text", "write_bytes", "unlink", "rmtree", "rmdir",
        "chmod", "chown", "symlink", "listdir", "scandir", "chdir", "expanduser", "FileIO",
        "mkdir", "makedirs", "removedirs", "touch", "iterdir", "rglob", "glob", "symlink_to",
        "hardlink_to", "link_to", "truncate_file", "copyfile", "copytree",
        "open_code", "get_handle", "get_filepath_or_buffer", "open_file_cm", "to_filehandle",
        "get_sample_data", "urlopen", "urlretrieve",
        # native code and raw memory
        "CDLL", "PyDLL", "cdll", "pydll", "windll", "oledll", "LoadLibrary", "load_library",
        "dlopen", "pythonapi", "from_address", "addressof", "string_at", "memmove",
        "memset", "foreign_buffer", "as_strided", "DummyArray", "from_buffers",
        "LowLevelCallable", "build_and_import_extension",
        # matplotlib imports the module named here when a figure is saved in that format
        "register_backend",
        # importing by name
        "import_module", "import_optional_dependency", "load_module", "exec_module",
        "find_spec", "find_module", "resolve_name", "load_backend_module", "module_from_spec",
        # string evaluation, class building and attribute access by name
        "get_type_hints", "ForwardRef", "singledispatch",
        "singledispatchmethod", "make_dataclass", "SimpleNamespace", "CodeType",
        "FunctionType", "LambdaType", "FrameType", "TracebackType", "new_class",
        "update_wrapper",
        # template engines: pandas' Styler carries an unsandboxed Jinja2 environment
        "env", "environment", "from_string", "from_custom_template", "jinja2", "loader",
        "get_template", "select_template", "compile_expression", "template_html",
        "template_html_table", "template_html_style", "template_latex", "template_string",
        "globals",
        # deserialization
        "read_pickle", "to_pickle", "unpickle",
    }
)  # fmt: skip
# Names refused only when called: `x.system(...)` runs a shell, while `df.system` is
# plausibly a column.
CALLED_CAPABILITIES = frozenset({"system", "open", "spawn", "kill", "getstatusoutput"})
# Members of allowed modules that the resolver refuses by name.
DENIED_MEMBERS = {
    "io": frozenset({"open", "FileIO", "open_code"}),
    "_io": frozenset({"open", "FileIO", "open_code"}),
    "string": frozenset({"Formatter"}),
    "functools": frozenset({"singledispatch", "singledispatchmethod", "update_wrapper"}),
    "typing": frozenset({"get_type_hints", "ForwardRef"}),
    "dataclasses": frozenset({"make_dataclass"}),
    # contextlib.chdir moves the working directory that strict's file reads are held to.
    "contextlib": frozenset({"chdir"}),
    "time": frozenset({"clock_settime", "clock_settime_ns", "tzset"}),
    # reset_tzpath points zoneinfo at any directory to read files from.
    "zoneinfo": frozenset({"reset_tzpath", "TZPATH"}),
}
CAPABILITY_SUBSTRINGS = ("pickle", "marshal", "subprocess", "ctypes", "popen", "dlopen")

# Strict I/O: these functions read or write files (or URLs) when given a path; strict only
# lets them work on an in-memory buffer made in the same cell (io.BytesIO / io.StringIO).
IO_FUNCTIONS = frozenset(
    {
        "read_csv", "read_table", "read_fwf", "read_json", "read_html", "read_xml",
        "read_excel", "read_parquet", "read_feather", "read_orc", "read_pickle", "read_hdf",
        "read_sas", "read_spss", "read_stata", "read_gbq", "read_sql", "read_sql_query",
        "read_sql_table", "read_clipboard", "to_csv", "to_json", "to_html", "to_xml",
        "to_excel", "to_parquet", "to_feather", "to_orc", "to_pickle", "to_hdf", "to_sql",
        "to_stata", "to_clipboard", "to_latex", "to_markdown", "to_string", "ExcelWriter",
        "ExcelFile", "HDFStore",
        "load", "save", "savez", "savez_compressed", "loadtxt", "savetxt", "genfromtxt",
        "fromfile", "tofile", "memmap", "fromregex", "DataSource", "open_memmap", "dump",
        "recfromcsv", "recfromtxt",
        "savefig", "imsave", "imread", "print_figure", "print_png", "PdfPages", "rc_file",
        "write_table", "ParquetFile", "ParquetWriter", "ParquetDataset",
        "read_schema", "read_metadata", "write_to_dataset", "write_metadata", "OSFile",
        "memory_map", "create_memory_map", "input_stream", "output_stream", "open_csv",
        "write_csv", "write_feather", "open_file", "new_file", "open_stream",
        "new_stream", "read_tensor", "write_tensor", "read_message", "MemoryMappedFile",
        "loadmat", "savemat", "mmread", "mmwrite", "rc_params_from_file", "TextFileReader",
        "StataReader", "read_sas7bdat",
    }
)  # fmt: skip
# matplotlib canvases write a file in format <fmt> with `canvas.print_<fmt>(path)`
# (print_png, print_jpg, print_tif, print_rgba, print_raw, ...): every such method is a writer.
CANVAS_PRINTER = re.compile(r"^print_[a-z0-9]+$")
# Calls that hand out a file object or write to the file system whatever their arguments.
ALWAYS_IO_FUNCTIONS = frozenset(
    {"memmap", "DataSource", "fromfile", "tofile", "open_memmap", "OSFile", "memory_map",
     "create_memory_map", "read_sql", "read_sql_query", "read_sql_table", "to_sql",
     "read_clipboard", "to_clipboard", "HDFStore", "read_hdf", "to_hdf", "read_pickle",
     "to_pickle", "rc_file", "read_gbq", "read_xml", "to_xml", "MemoryMappedFile"}
)  # fmt: skip
# I/O names too generic to refuse as plain references (`df.load` may be a column); their
# aliases are caught when the chain resolves to a library function (`f = np.load`).
GENERIC_IO_FUNCTIONS = frozenset(
    {"load", "save", "dump", "open_file", "new_file", "open_stream", "new_stream",
     "read_message", "read_schema", "read_metadata",
     "read_table", "write_table", "open_csv"}
)  # fmt: skip
# pandas option setters: a computed key could set `plotting.backend` (imports a module).
OPTION_SETTERS = frozenset({"set_option", "option_context"})
RC_SETTERS = frozenset({"rc_context", "update"})

# The readers among IO_FUNCTIONS: strict lets them read a literal relative path inside the
# working directory (`pd.read_csv("data/sales.csv")`); writers only ever get a buffer.
READ_FUNCTIONS = frozenset(
    {
        "read_csv", "read_table", "read_fwf", "read_json", "read_html", "read_excel",
        "read_parquet", "read_feather", "read_orc", "read_sas", "read_spss", "read_stata",
        "ExcelFile", "load", "loadtxt", "genfromtxt", "fromregex", "recfromcsv",
        "recfromtxt", "imread", "ParquetFile", "ParquetDataset", "read_schema",
        "read_metadata", "open_csv", "loadmat", "mmread", "TextFileReader", "StataReader",
        "read_sas7bdat", "input_stream", "open_file", "open_stream", "read_tensor",
        "read_message",
    }
)  # fmt: skip
# Call names that look like file access by their shape (a reader or writer nobody listed):
# a path, URL or file name passed straight to one of them is refused in strict.
# (`loads`/`dumps` work on strings; a function the cell defines itself is checked anyway.)
FILE_CALL_NAME = re.compile(
    r"^(?:read|load(?!s$)|open|save|write|dump(?!s$)|import|imread|imsave|thumbnail|use$)"
    r"|(?:^|_)(?:from|to)_?file|file$",
    re.IGNORECASE,
)

# Keyword names that carry the path (or buffer) in the I/O functions above.
IO_PATH_KEYWORDS = frozenset(
    {
        "path", "path_or_buf", "path_or_buffer", "filepath_or_buffer", "fname", "file",
        "filename", "buf", "io", "fp", "f", "where", "source", "sink", "excel_writer", "uri",
        "fh",
    }
)  # fmt: skip
# Constructors whose result is an in-memory buffer.
BUFFER_CONSTRUCTORS = frozenset(
    {"BytesIO", "StringIO", "BufferOutputStream", "BufferReader", "py_buffer",
     "MockOutputStream", "FixedSizeBufferWriter"}
)  # fmt: skip

# A string that names a file system location outside the working directory, or a URL.
PATH_PREFIX = re.compile(
    r"^(?:~[\w/\\]|/[\w.~-]|\.\.?[/\\]|[A-Za-z]:[\\/]|\\\\|file:|[A-Za-z][\w+.-]*://)"
)
# A file name with a data/code extension (checked where it is passed to a call).
FILE_NAME = re.compile(
    r"^[\w./\\~-]*[\w-]\.(?:csv|tsv|txt|json|jsonl|parquet|pq|pkl|pickle|npy|npz|h5|hdf5"
    r"|hdf|xlsx|xls|feather|arrow|orc|png|jpe?g|gif|svg|pdf|db|sqlite3?|py|pyc|sh|so"
    r"|dll|dylib|mat|wav|mp4|avi|gz|bz2|zip|tar|xz|log|cfg|ini|toml|ya?ml|html?|xml)$",
    re.IGNORECASE,
)

# XML that makes a parser read files or URLs (external entities, XSLT document()).
XML_EXTERNAL = re.compile(r"<!ENTITY|<!DOCTYPE[^>]*\[|SYSTEM\s+[\"']|document\s*\(|file:/", re.I)

# Configuration strings that make matplotlib or pandas import modules or run programs.
RISKY_CONFIG_STRING = re.compile(
    r"^(?:module://|plotting\.backend|animation\.|text\.latex|text\.usetex|pgf\.|"
    r"ps\.usedistiller|savefig\.directory|webagg\.|backend$|backend_fallback$)"
)

# matplotlib rc groups that configure external programs (`plt.rc("text", usetex=True)`).
RISKY_RC_GROUPS = frozenset({"text", "pgf", "animation", "ps", "savefig", "webagg", "backend"})
# Calls that import a plotting backend named by their first argument.
BACKEND_LOADERS = frozenset({"use", "switch_backend"})
# Non-interactive matplotlib backends: no GUI event loop, no web server, no LaTeX.
SAFE_BACKENDS = frozenset({"agg", "pdf", "svg", "ps", "cairo", "template"})

# Names under which the usual modules are bound in notebooks; used to resolve chains such
# as `pd.io.common.os` when the import happened in an earlier cell.
CONVENTIONAL_ALIASES = {
    "pd": "pandas",
    "np": "numpy",
    "plt": "matplotlib.pyplot",
    "mpl": "matplotlib",
    "pa": "pyarrow",
    "pq": "pyarrow.parquet",
    "pc": "pyarrow.compute",
    "sp": "scipy",
    "stats": "scipy.stats",
}

# pandas methods that call a method named by a string (`df.agg("sum")` is
# `getattr(df, "sum")()`): literal names there are checked like attribute names.
DISPATCH_METHODS = frozenset({"agg", "aggregate", "apply", "transform"})

# pandas methods that evaluate a string expression.
QUERY_METHODS = frozenset({"query", "eval"})
QUERY_FORBIDDEN_KEYWORDS = frozenset({"local_dict", "global_dict", "resolvers", "level", "target"})
# engine="python"/parser="python" evaluate with Python's own semantics: literal pandas only.
QUERY_ENGINE_KEYWORDS: dict[str, frozenset[str | None]] = {
    "engine": frozenset({"numexpr", None}),
    "parser": frozenset({"pandas", None}),
}
# np.load(mmap_mode=...) maps the file; "r+"/"w+" write through to it.
READ_ONLY_MMAP_MODES = frozenset({None, "r", "c"})

# Factories that build classes from runtime attribute names.
ENUM_FACTORIES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})
ACCESSOR_REGISTRARS = frozenset(
    {"register_dataframe_accessor", "register_series_accessor", "register_index_accessor"}
)
