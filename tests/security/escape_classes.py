# ruff: noqa: E501  (one escape per line, as in corpus.py)
"""Escapes by class (issue 19): what a second red team tried, rewritten in our own words.

Every `CLOSED` entry must be refused by `strict`; `test_escape_classes.py` also reports how
many `standard` refuses. `OPEN` holds the classes no static check closes: they must pass
the checker (the tests pin that down, so docs/security.md stays honest) and are the kernel
sandbox's to stop.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class EscapeClass(StrEnum):
    MODULE_WALK = "module walks through re-exported modules"
    EVAL_SCOPE = "pandas evaluation scope"
    RUNTIME_CODE = "code and class objects made at run time"
    DATA_IO = "data-library readers and writers"
    EXHAUSTION = "resource exhaustion by literal sizes"
    IPYTHON = "IPython's own API"
    OPEN_LOOP = "endless loops and run-time sizes (open)"
    OPEN_COMPUTED = "names and paths computed at run time (open)"


@dataclass(frozen=True)
class ClassedEscape:
    kind: EscapeClass
    achieves: str
    code: str


C = ClassedEscape
K = EscapeClass
# fmt: off
CLOSED: list[ClassedEscape] = [
    # -- module walks ------------------------------------------------------------------------
    C(K.MODULE_WALK, "runs a shell through the os pandas imported", 'import pandas as pd\npd.io.common.os.system("id")'),
    C(K.MODULE_WALK, "loads a shared library through numpy's ctypes helpers", "import numpy as np\nnp.ctypeslib.load_library('libc', '.')"),
    C(K.MODULE_WALK, "unpickles bytes through the pickle numpy's npyio imported", "import numpy as np\nnp.lib.npyio.pickle.loads(payload)"),
    C(K.MODULE_WALK, "reaches scipy's private helpers", "import scipy\nscipy._lib._util"),
    C(K.MODULE_WALK, "the sys module re-exported by a pandas helper module", "import pandas as pd\npd.core.config_init.sys.modules"),
    C(K.MODULE_WALK, "an alias hides the pandas io package before the walk", "import pandas as pd\nio_pkg = pd.io\nio_pkg.common.os.environ"),
    C(K.MODULE_WALK, "the builtins module through a getattr hop", 'import dataclasses\ngetattr(dataclasses, "builtins").exec("1")'),
    C(K.MODULE_WALK, "the file system module of pyarrow by attribute", "import pyarrow as pa\npa.fs.LocalFileSystem().delete_dir('x')"),
    C(K.MODULE_WALK, "importlib re-exported by contextlib's neighbours", "import contextlib\ncontextlib.sys.modules['os']"),
    C(K.MODULE_WALK, "changes directory through contextlib", "import contextlib\nwith contextlib.chdir('/'):\n    pass"),
    # -- pandas evaluation scope -------------------------------------------------------------
    C(K.EVAL_SCOPE, "an @-reference walks from a local into a module", 'df.query("@pd.io.common.os.getcwd() == 1")'),
    C(K.EVAL_SCOPE, "local_dict hands pd.eval any object", 'import pandas as pd\npd.eval("x + 1", local_dict={"x": payload})'),
    C(K.EVAL_SCOPE, "resolvers inject names into DataFrame.eval", 'df.eval("a + b", resolvers=[{"a": payload}])'),
    C(K.EVAL_SCOPE, "the Python engine evaluates with Python semantics", 'df.query("a > 1", engine="python")'),
    C(K.EVAL_SCOPE, "a query string assembled at run time", 'df.query("a" + " > " + user_text)'),
    C(K.EVAL_SCOPE, "pd.eval imported under another name, fed a variable", "from pandas import eval as evaluate\nevaluate(expr)"),
    C(K.EVAL_SCOPE, "global_dict replaces the scope of a query", 'df.query("a > lim", global_dict={"lim": payload})'),
    C(K.EVAL_SCOPE, "pd.eval on an f-string", 'import pandas as pd\npd.eval(f"{left} + {right}")'),
    C(K.EVAL_SCOPE, "pandas' expression engine called on a computed string", "import pandas as pd\npd.core.computation.expr.Expr(text)()"),
    C(K.EVAL_SCOPE, "the Python engine class imported directly", "from pandas.core.computation.engines import PythonEngine"),
    C(K.EVAL_SCOPE, "the engine table of pd.eval", 'from pandas.core.computation.eval import ENGINES\nENGINES["python"]'),
    # -- code and class objects made at run time ---------------------------------------------
    C(K.RUNTIME_CODE, "builds a function from a code object", "import types\ntypes.FunctionType(code, {})"),
    C(K.RUNTIME_CODE, "builds a code object by hand", "import types\ntypes.CodeType(0, 0, 0, 0, 0, 0, b'', (), (), (), '', '', 0, b'')"),
    C(K.RUNTIME_CODE, "three-argument type() builds a class with a hook", 'Hooked = type("Hooked", (), {"_" + "_reduce__": print})'),
    C(K.RUNTIME_CODE, "type of a type, called with three arguments", 'meta = type(int)\nX = meta("X", (), {})'),
    C(K.RUNTIME_CODE, "__class__ of a class, called with three arguments", 'Y = int.__class__("Y", (object,), {"k": 1})'),
    C(K.RUNTIME_CODE, "attrgetter with a dunder name built from pieces", 'import operator\noperator.attrgetter("__glob" + "als__")(f)'),
    C(K.RUNTIME_CODE, "attrgetter with a name from a variable", "import operator\ngrab = operator.attrgetter(name)\ngrab(obj)"),
    C(K.RUNTIME_CODE, "methodcaller with a private method name", 'from operator import methodcaller\nmethodcaller("_repr_html_")(df)'),
    C(K.RUNTIME_CODE, "attrgetter passed around as a value", "import operator\ngetters = [operator.attrgetter]"),
    C(K.RUNTIME_CODE, "getattr with a computed name", "getattr(df, prefix + suffix)"),
    C(K.RUNTIME_CODE, "pandas dispatch reads a private attribute by name", 'df.agg("_mgr")'),
    C(K.RUNTIME_CODE, "groupby dispatch to a pickle writer by name", 'df.groupby("k").apply("to_pickle")'),
    C(K.RUNTIME_CODE, "functools.reduce walks attributes with getattr", 'import functools\nfunctools.reduce(getattr, names, obj)'),
    C(K.RUNTIME_CODE, "a class with a metaclass made at run time", "class Sneaky(metaclass=maker):\n    pass"),
    C(K.RUNTIME_CODE, "an allowed metaclass called as a class factory", 'import abc\nabc.ABCMeta("Z", (), namespace)'),
    C(K.RUNTIME_CODE, "type() of a type smuggled through a list", '[type(int)][0]("W", (), {})'),
    C(K.RUNTIME_CODE, "type() of a type bound by a walrus", '(maker := type(int))("V", (), {})'),
    C(K.RUNTIME_CODE, "a grammar-changing future import", "from __future__ import barry_as_FLUFL"),
    # -- data-library readers and writers ----------------------------------------------------
    C(K.DATA_IO, "overwrites a system file with CSV", 'df.to_csv("/etc/cron.d/job")'),
    C(K.DATA_IO, "reads a private key as CSV", 'import pandas as pd\npd.read_csv("/root/.ssh/id_rsa")'),
    C(K.DATA_IO, "reads a file above the working directory", 'import pandas as pd\npd.read_json("../../secrets.json")'),
    C(K.DATA_IO, "reads from a home-relative path", 'import numpy as np\nnp.loadtxt("~/.bash_history", dtype=str)'),
    C(K.DATA_IO, "writes an array to a path in the working directory", 'import numpy as np\nnp.save("planted.npy", arr)'),
    C(K.DATA_IO, "writes a parquet file", 'import pyarrow.parquet as pq\npq.write_table(table, "drop.parquet")'),
    C(K.DATA_IO, "writes a table into a database", 'df.to_sql("users", engine)'),
    C(K.DATA_IO, "writes a pickle", 'df.to_pickle("state.pkl")'),
    C(K.DATA_IO, "an array pickles itself into a file", 'arr.dump("state.pkl")'),
    C(K.DATA_IO, "loads a pickle (runs code)", 'import pandas as pd\npd.read_pickle("state.pkl")'),
    C(K.DATA_IO, "the pickle reader imported under another name", 'from pandas import read_pickle as load_state\nload_state(path)'),
    C(K.DATA_IO, "reads an HDF file whose object columns are pickles", 'import pandas as pd\npd.read_hdf("store.h5", "frame")'),
    C(K.DATA_IO, "np.load with pickles switched on", 'import numpy as np\nnp.load("arr.npy", allow_pickle=True)'),
    C(K.DATA_IO, "reads a path the cell computed", 'import pandas as pd\npd.read_parquet(folder + "/part-0.parquet")'),
    C(K.DATA_IO, "opens the local file system through pyarrow", "import pyarrow.fs as pafs\npafs.LocalFileSystem().open_input_stream('x')"),
    C(K.DATA_IO, "fetches a URL through a reader", 'import pandas as pd\npd.read_csv("https://attacker.example/x.csv")'),
    C(K.DATA_IO, "duckdb COPY writes anywhere", "import duckdb\nduckdb.sql(\"COPY (SELECT 1) TO '/tmp/out.csv'\")"),
    C(K.DATA_IO, "sqlite3 ATTACH creates a file", "import sqlite3\nsqlite3.connect(':memory:').execute(\"ATTACH 'x.db' AS x\")"),
    C(K.DATA_IO, "a writer nobody listed, named like one, given a path", 'import matplotlib.image as mimg\nmimg.thumbnail("in.png", "/tmp/out.png")'),
    C(K.DATA_IO, "a path keyword to an unknown function", 'render(table, fname="/var/www/index.html")'),
    C(K.DATA_IO, "creates a file through pyarrow's memory map", 'import pyarrow as pa\npa.MemoryMappedFile.create("big.bin", 10**9)'),
    C(K.DATA_IO, "matplotlib imports a module named at run time when saving", 'from matplotlib.backend_bases import register_backend\nregister_backend("png", mod)'),
    C(K.DATA_IO, "reads the credentials file of the project", 'import pandas as pd\npd.read_csv(".env", sep="=")'),
    C(K.DATA_IO, "a writable memory map of a file in the directory", 'import numpy as np\nnp.load("weights.npy", mmap_mode="r+")'),
    # -- resource exhaustion -----------------------------------------------------------------
    C(K.EXHAUSTION, "an integer with ten billion digits", "n = 10**10**10"),
    C(K.EXHAUSTION, "a terabyte string", "s = 'a' * 10**12"),
    C(K.EXHAUSTION, "a trillion-element list", "zeros = [0] * 10**12"),
    C(K.EXHAUSTION, "a materialised range", "values = list(range(10**12))"),
    C(K.EXHAUSTION, "a comprehension over a huge range", "squares = [i * i for i in range(2**40)]"),
    C(K.EXHAUSTION, "an 8-terabyte array", "import numpy as np\nnp.zeros((10**6, 10**6))"),
    C(K.EXHAUSTION, "a huge shift", "mask = 1 << 10**10"),
    C(K.EXHAUSTION, "random numbers by the trillion", "import numpy as np\nnp.random.default_rng().normal(size=10**12)"),
    # -- IPython's own API ---------------------------------------------------------------------
    C(K.IPYTHON, "the shell object runs a command", 'get_ipython().system("id")'),
    C(K.IPYTHON, "the input history names IPython keeps", "_ih[-1]"),
    C(K.IPYTHON, "a line magic runs a shell", "%sx id"),
    C(K.IPYTHON, "IPython's module, imported", "import IPython\nIPython.get_ipython()"),
    C(K.IPYTHON, "the input history under its public name", 'In.append("rewritten history")'),
    C(K.IPYTHON, "IPython's own open() in the namespace", 'open("notes.txt", "w")'),
]

# Classes no static check closes: they must pass the checker (and be stopped by the kernel
# sandbox's time and memory limits, or by the libraries' own path handling).
OPEN: list[ClassedEscape] = [
    C(K.OPEN_LOOP, "an endless loop", "while True:\n    pass"),
    C(K.OPEN_LOOP, "a size computed at run time", "n = len(df) * 10**9\nbig = [0] * n"),
    C(K.OPEN_LOOP, "exponential work in a regular expression", 'import re\nre.match("(a+)+$", "a" * 40 + "b")'),
    C(K.OPEN_COMPUTED, "a pandas method dispatched by a computed name", "df.agg(method_name)"),
    C(K.OPEN_COMPUTED, "a relative path that is a symlink out of the directory", 'import pandas as pd\npd.read_csv("link_to_etc_passwd.csv")'),
]
# fmt: on
