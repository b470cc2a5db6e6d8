# ruff: noqa: E501  (cells are quoted as written, some with long lines)
"""Everyday analysis cells (issue 19) in varied styles; `ALL_BENIGN` is the whole corpus.

These were written to look like what a model or a person types in a notebook: URLs and
paths as string data, `import time`, `from __future__ import annotations`, contextlib,
zoneinfo, dataclasses, typing, operator, small classes with dunder protocol methods. Both
policies must pass every one (strict may skip a cell only with a `strict_reason`), and the
runtime test runs them for real after `SETUP`.
"""

from __future__ import annotations

from tests.security.corpus import BENIGN, Benign

B = Benign
SQLITE_REASON = "sqlite3 is off the strict allow-list: its SQL can ATTACH and write files"
FILE_REASON = "reads a data file that only exists in a user's project"

EVERYDAY: list[Benign] = [
    B(
        "url_prefix_strip",
        """\
sales["url"] = ["https://shop.example.com/p/" + p for p in sales["product"]]
sales["slug"] = sales["url"].str.replace("https://", "", regex=False).str.split("/").str[-1]
sales["slug"].tolist()
""",
    ),
    B(
        "api_path_filter",
        """\
log = pd.DataFrame({"path": ["/api/users", "/static/app.js", "/api/orders", "/index.html"],
                    "ms": [12, 3, 40, 5]})
api = log[log["path"].str.startswith("/api/")]
print(f"{len(api)} API calls, mean {api['ms'].mean():.1f} ms")
""",
    ),
    B(
        "time_module",
        """\
import time
start = time.perf_counter()
total = sum(range(10_000))
elapsed = time.perf_counter() - start
print(f"sum={total} in {elapsed:.4f}s", time.strftime("%Y-%m-%d", time.gmtime(0)))
""",
    ),
    B(
        "future_annotations",
        """\
from __future__ import annotations

def ratio(a: float, b: float) -> float | None:
    return a / b if b else None

ratio(3, 4), ratio(1, 0)
""",
    ),
    B(
        "contextlib_suppress",
        """\
import contextlib
with contextlib.suppress(KeyError):
    value = {"a": 1}["b"]
print("carried on")
""",
    ),
    B(
        "contextmanager_section",
        """\
from contextlib import contextmanager

@contextmanager
def section(title):
    print(f"== {title} ==")
    yield title.upper()
    print("== end ==")

with section("summary") as head:
    print(head, sales["units"].sum())
""",
    ),
    B(
        "zoneinfo_convert",
        """\
from datetime import datetime
from zoneinfo import ZoneInfo
noon_utc = datetime(2024, 3, 1, 12, 0, tzinfo=ZoneInfo("UTC"))
noon_utc.astimezone(ZoneInfo("Europe/Berlin")).hour
""",
    ),
    B(
        "operator_itemgetter",
        """\
import operator
rows = [("b", 2), ("a", 3), ("c", 1)]
sorted(rows, key=operator.itemgetter(1)), operator.add(2, 3), operator.mul(4, 5)
""",
    ),
    B(
        "attrgetter_literal",
        """\
from operator import attrgetter
from dataclasses import dataclass

@dataclass
class Item:
    name: str
    price: float

items = [Item("b", 2.0), Item("a", 1.5)]
[i.name for i in sorted(items, key=attrgetter("price"))]
""",
    ),
    B(
        "abc_shapes",
        """\
from abc import ABC, abstractmethod

class Shape(ABC):
    @abstractmethod
    def area(self) -> float: ...

class Square(Shape):
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side ** 2

Square(3).area()
""",
    ),
    B(
        "pprint_nested",
        """\
from pprint import pformat, pprint
nested = {"region": {"north": [1, 2], "south": [3]}, "total": 6}
pprint(nested, width=30)
len(pformat(nested))
""",
    ),
    B(
        "copy_shallow_vs_deep",
        """\
import copy
config = {"filters": ["north"], "limit": 5}
shallow = copy.copy(config)
deep = copy.deepcopy(config)
shallow["filters"].append("south")
config["filters"], deep["filters"]
""",
    ),
    B(
        "int_enum_levels",
        """\
from enum import IntEnum

class Level(IntEnum):
    LOW = 1
    MID = 2
    HIGH = 3

sales["level"] = [Level.HIGH if u > 7 else Level.LOW for u in sales["units"]]
sales["level"].map(lambda lv: Level(lv).name).value_counts().to_dict()
""",
    ),
    B(
        "typing_generic_box",
        """\
from typing import Generic, TypeVar

T = TypeVar("T")

class Box(Generic[T]):
    def __init__(self, item: T) -> None:
        self.item = item

    def get(self) -> T:
        return self.item

Box(3).get(), Box("x").get()
""",
    ),
    B(
        "lru_cache_partial",
        """\
from functools import lru_cache, partial

@lru_cache(maxsize=128)
def slow_square(n: int) -> int:
    return n * n

round2 = partial(round, ndigits=2)
[slow_square(i) for i in range(5)], round2(3.14159), slow_square.cache_info().hits
""",
    ),
    B(
        "itertools_mix",
        """\
from itertools import accumulate, chain, islice, product, pairwise
(list(accumulate([1, 2, 3, 4])), list(chain("ab", "cd")),
 list(islice(product("ab", repeat=2), 3)), list(pairwise([1, 2, 3])))
""",
    ),
    B(
        "collections_mix",
        """\
from collections import ChainMap, OrderedDict, namedtuple
Row = namedtuple("Row", ["region", "units"])
rows = [Row(r, u) for r, u in zip(sales["region"], sales["units"])]
defaults = {"currency": "EUR", "precision": 2}
settings = ChainMap({"precision": 1}, defaults)
ordered = OrderedDict(sorted({r.region: r.units for r in rows}.items()))
rows[0].units, settings["precision"], settings["currency"], list(ordered)
""",
    ),
    B(
        "regex_findall_sub",
        """\
import re
text = "Order #123 shipped to https://t.example/track?id=9 on 2024-05-01"
numbers = re.findall(r"\\d+", text)
clean = re.sub(r"https?://\\S+", "<url>", text)
numbers, clean
""",
    ),
    B(
        "json_normalize",
        """\
import json
payload = '{"users": [{"id": 1, "info": {"city": "Oslo"}}, {"id": 2, "info": {"city": "Rome"}}]}'
data = json.loads(payload)
pd.json_normalize(data["users"])
""",
    ),
    B(
        "statistics_summary",
        """\
import statistics
vals = [2.5, 3.1, 4.7, 5.0, 3.3]
statistics.mean(vals), round(statistics.stdev(vals), 3), statistics.quantiles(vals, n=4)
""",
    ),
    B(
        "math_helpers",
        """\
import math
angles = [0, 30, 45, 90]
[round(math.sin(math.radians(a)), 3) for a in angles], math.comb(5, 2), math.log10(1000), math.hypot(3, 4)
""",
    ),
    B(
        "decimal_rounding",
        """\
from decimal import Decimal, ROUND_HALF_UP
prices = [Decimal("2.675"), Decimal("1.005")]
[p.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP) for p in prices]
""",
    ),
    B(
        "fractions_shares",
        """\
from fractions import Fraction
shares = [Fraction(1, 3), Fraction(1, 6), Fraction(1, 2)]
sum(shares), max(shares), Fraction(0.333).limit_denominator(10)
""",
    ),
    B(
        "textwrap_report",
        '''\
import textwrap
report = textwrap.dedent("""
    Sales report
      north: 17
      south: 12
""")
print(textwrap.indent(report.strip(), "> "))
textwrap.wrap("a b c d e f g h", width=5)
''',
    ),
    B(
        "string_template",
        """\
from string import Template, capwords
msg = Template("Hello $name, you sold $n units").substitute(name="Ann", n=3)
msg, capwords("north region"), "{:>8}".format("right")
""",
    ),
    B(
        "fstring_number_formats",
        """\
x = 1234567.891
print(f"{x:,.2f}", f"{0.256:.1%}", f"{42:08b}", f"{'left':<10}|", f"{x:.3e}")
print(f"{sales['units'].sum()=}")
""",
    ),
    B(
        "percent_and_format_spec",
        """\
row = ("north", 17, 0.4321)
print("%-8s %4d %6.2f%%" % (row[0], row[1], row[2] * 100))
print(format(row[2], ".1%"), format(1234, ","))
""",
    ),
    B(
        "dict_grouping_loop",
        """\
by_region = {}
for region, units in zip(sales["region"], sales["units"]):
    by_region.setdefault(region, []).append(int(units))
{k: sum(v) / len(v) for k, v in sorted(by_region.items())}
""",
    ),
    B(
        "closures_scalers",
        """\
def make_scaler(k):
    def scale(v):
        return v * k
    return scale

double, triple = make_scaler(2), make_scaler(3)
list(map(double, [1, 2, 3])), triple(7)
""",
    ),
    B(
        "generator_chunks",
        """\
def chunks(seq, size):
    for i in range(0, len(seq), size):
        yield seq[i:i + size]

list(chunks(list(range(7)), 3)), sum(len(c) for c in chunks("abcdefgh", 3))
""",
    ),
    B(
        "sort_dicts_by_keys",
        """\
people = [{"name": "bo", "age": 31}, {"name": "Al", "age": 25}, {"name": "cy", "age": 31}]
ranked = sorted(people, key=lambda p: (-p["age"], p["name"].lower()))
[p["name"] for p in ranked]
""",
    ),
    B(
        "custom_exception",
        """\
class DataError(ValueError):
    pass

def check(frame):
    if frame["units"].lt(0).any():
        raise DataError("negative units")
    return True

try:
    ok = check(sales)
except DataError as err:
    ok = str(err)
else:
    print("clean")
finally:
    print("checked")
ok
""",
    ),
    B(
        "stringio_with_print",
        """\
import io
with io.StringIO() as out:
    print("a,b", file=out)
    print("1,2", file=out)
    text = out.getvalue()
pd.read_csv(io.StringIO(text))
""",
    ),
    B(
        "groupby_transform_share",
        """\
sales["share"] = sales["units"] / sales.groupby("region")["units"].transform("sum")
sales[["region", "units", "share"]].round(2).sort_values(["region", "share"])
""",
    ),
    B(
        "concat_and_outer_merge",
        """\
extra = pd.DataFrame({"region": ["west"], "manager": ["Di"]})
all_regions = pd.concat([regions, extra], ignore_index=True)
m = sales.merge(all_regions, on="region", how="outer", indicator=True)
m["_merge"].value_counts().to_dict()
""",
    ),
    B(
        "pivot_then_melt",
        """\
wide = sales.pivot_table(index="region", columns="product", values="units", aggfunc="sum")
long = wide.reset_index().melt(id_vars="region", value_name="units").dropna()
long.shape, wide.columns.tolist()
""",
    ),
    B(
        "hourly_resample_rolling",
        """\
idx = pd.date_range("2024-01-01", periods=60, freq="h")
ts = pd.Series(np.arange(60.0), index=idx)
ts.resample("6h").mean().rolling(2).mean().dropna().head()
""",
    ),
    B(
        "email_domains",
        """\
emails = pd.Series(["Ann@Example.com", "bo@test.org", None, "cy@example.com"])
emails.str.lower().str.extract(r"@(.+)$")[0].value_counts(dropna=False).to_dict()
""",
    ),
    B(
        "date_parts",
        """\
dates = pd.to_datetime(pd.Series(["2024-01-05", "2024-02-10", "2024-02-29"]))
(dates.dt.month_name().tolist(), (dates.max() - dates.min()).days,
 dates.dt.to_period("M").astype(str).tolist(), dates.dt.dayofweek.tolist())
""",
    ),
    B(
        "cut_into_bins",
        """\
bins = pd.cut(sales["price"], bins=[0, 3, 5, 10], labels=["cheap", "mid", "dear"])
quartile = pd.qcut(sales["units"], q=2, labels=["low", "high"])
pd.crosstab(bins, quartile)
""",
    ),
    B(
        "numpy_masks",
        """\
a = np.array([3, -1, 4, -1, 5, -9, 2, 6])
positive = a[a > 0]
clipped = np.clip(a, -2, 4)
np.where(a < 0, 0, a).tolist(), positive.mean(), clipped.tolist(), np.argsort(a)[:3].tolist()
""",
    ),
    B(
        "numpy_random_histogram",
        """\
rng = np.random.default_rng(42)
sample = rng.normal(10, 2, size=1000)
counts, edges = np.histogram(sample, bins=5)
counts.sum(), np.quantile(sample, [0.1, 0.9]).round(1).tolist(), edges.shape
""",
    ),
    B(
        "numpy_polyfit_interp",
        """\
x = np.linspace(0, 10, 11)
y = 3 * x + 2 + np.sin(x)
slope, intercept = np.polyfit(x, y, 1)
round(slope, 1), np.interp(2.5, x, y).round(2)
""",
    ),
    B(
        "frozen_ordered_dataclass",
        """\
from dataclasses import dataclass, replace, field

@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int = 0
    notes: tuple[str, ...] = field(default=(), compare=False)

versions = sorted([Version(1, 2), Version(0, 9), Version(1, 0)])
bumped = replace(versions[-1], minor=3)
versions[0], bumped
""",
    ),
    B(
        "container_class",
        """\
class Basket:
    def __init__(self, *items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def __contains__(self, item):
        return item in self.items

    def __eq__(self, other):
        return isinstance(other, Basket) and self.items == other.items

    def __repr__(self):
        return f"Basket({', '.join(map(repr, self.items))})"

b = Basket("apple", "pear")
len(b), "pear" in b, list(b), b == Basket("apple", "pear"), repr(b)
""",
    ),
    B(
        "property_validation",
        """\
class Temperature:
    def __init__(self, celsius=0.0):
        self.celsius = celsius

    @property
    def celsius(self):
        return self._celsius

    @celsius.setter
    def celsius(self, value):
        if value < -273.15:
            raise ValueError("below absolute zero")
        self._celsius = value

    @property
    def fahrenheit(self):
        return self.celsius * 9 / 5 + 32

t = Temperature(21.5)
t.fahrenheit
""",
    ),
    B(
        "map_filter_reduce",
        """\
from functools import reduce
nums = range(1, 11)
evens = list(filter(lambda n: n % 2 == 0, nums))
squares = list(map(lambda n: n ** 2, evens))
reduce(lambda acc, n: acc + n, squares, 0), evens
""",
    ),
    B(
        "enumerate_zip_unpack",
        """\
names = ["north", "south", "east"]
targets = [15, 10, 9]
for rank, (name, target) in enumerate(zip(names, targets), start=1):
    print(f"{rank}. {name:<6} target={target}")
head, *tail = names
head, tail
""",
    ),
    B(
        "collatz_while",
        """\
n, steps = 27, 0
while n != 1:
    n = n // 2 if n % 2 == 0 else 3 * n + 1
    steps += 1
    if steps > 1000:
        break
steps
""",
    ),
    B(
        "set_operations",
        """\
this_week = {"ann", "bo", "cy"}
last_week = {"bo", "di"}
this_week | last_week, this_week & last_week, this_week - last_week, this_week ^ last_week
""",
    ),
    B(
        "sqlite_in_memory",
        """\
import sqlite3
con = sqlite3.connect(":memory:")
con.execute("create table t (region text, units int)")
con.executemany("insert into t values (?, ?)", [(r, int(u)) for r, u in zip(sales["region"], sales["units"])])
con.execute("select region, sum(units) from t group by region order by region").fetchall()
""",
        strict_reason=SQLITE_REASON,
    ),
    B(
        "sqlite_read_sql_query",
        """\
import sqlite3
con = sqlite3.connect(":memory:")
sales[["region", "units"]].to_sql("sales", con, index=False)
pd.read_sql_query("select region, avg(units) as avg_units from sales group by region", con)
""",
        strict_reason=SQLITE_REASON,
    ),
    B(
        "pyarrow_filter",
        """\
import pyarrow as pa
import pyarrow.compute as pc
t = pa.table({"x": [1, 2, 3], "y": ["a", "b", "c"]})
t.filter(pc.greater(t["x"], 1)).to_pydict()
""",
    ),
    B(
        "json_dumps_default",
        """\
import json
from datetime import date
json.dumps({"day": date(2024, 1, 2), "tags": ["a", "b"]}, default=str, sort_keys=True)
""",
    ),
    B(
        "warnings_catch",
        """\
import warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    r = np.array([1.0, 0.0])
    out = r / r
np.isnan(out).tolist()
""",
    ),
    B(
        "random_choices",
        """\
import random
rng = random.Random(7)
rng.choices(["a", "b", "c"], weights=[5, 1, 1], k=5), rng.randint(1, 6)
""",
    ),
    B(
        "file_paths_as_data",
        """\
files = pd.Series(["/data/raw/a.csv", "/data/raw/b.parquet", "C:\\\\temp\\\\c.csv", "~/notes.txt", "../up.json"])
files.str.rsplit("/", n=1).str[-1].tolist(), int(files.str.endswith(".csv").sum())
""",
    ),
    B(
        "url_columns",
        """\
links = pd.DataFrame({"url": ["https://a.example.com/x", "http://b.example.org/y?q=1", "ftp://files.example.net/z"]})
links["host"] = links["url"].str.extract(r"^\\w+://([^/]+)")[0]
links["secure"] = links["url"].str.startswith("https://")
links["scheme"] = links["url"].str.split("://").str[0]
links
""",
    ),
    B(
        "print_urls_and_paths",
        """\
print("Docs: https://pandas.pydata.org/docs/ ; notes live in ~/notes and /srv/data")
base = "https://api.example.com"
endpoint = f"{base}/v1/orders?limit={10}"
endpoint.replace(base, ""), endpoint.startswith("https://"), "/etc/hosts" in ["/etc/hosts"]
""",
    ),
    B(
        "plot_title_with_path",
        """\
import io
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.plot([1, 2, 3], [3, 1, 2])
ax.set_title("Requests to /api/orders per hour (source: https://status.example.com)")
ax.set_xlabel("hour")
buf = io.BytesIO()
fig.savefig(buf, format="png")
plt.close(fig)
buf.tell() > 0
""",
        needs=("matplotlib",),
    ),
    B(
        "read_relative_csv",
        """\
orders = pd.read_csv("data/orders.csv", parse_dates=["day"])
orders.groupby("day")["amount"].sum()
""",
        run_reason=FILE_REASON,
    ),
    B(
        "read_relative_parquet",
        """\
events = pd.read_parquet("./exports/events.parquet", columns=["user", "kind"])
events["kind"].value_counts()
""",
        run_reason=FILE_REASON,
    ),
    B(
        "stack_unstack",
        """\
stacked = sales.set_index(["region", "product"])["units"]
table = stacked.groupby(level=[0, 1]).sum().unstack(fill_value=0)
table.stack().head(3).to_dict()
""",
    ),
    B(
        "apply_rowwise",
        """\
def label(row):
    return f"{row['region'][:1].upper()}-{row['product']}-{int(row['units'])}"

sales.apply(label, axis=1).tolist()[:3]
""",
    ),
    B(
        "numpy_einsum_vectorize",
        """\
m = np.arange(6).reshape(2, 3)
gram = np.einsum("ij,kj->ik", m, m)
sign = np.vectorize(lambda v: "pos" if v > 0 else "zero")
gram.tolist(), sign(np.array([0, 2])).tolist()
""",
    ),
    B(
        "inheritance_str",
        """\
class Animal:
    sound = "..."

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"{self.name} says {self.sound}"

class Dog(Animal):
    sound = "woof"

    def __init__(self, name, tricks=()):
        super().__init__(name)
        self.tricks = list(tricks)

str(Dog("rex", ["sit"])), isinstance(Dog("a"), Animal), Dog.__name__
""",
    ),
    B(
        "union_type_checks",
        """\
from typing import Union

def to_float(value: Union[int, float, str]) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    return float(value.replace(",", "."))

[to_float(v) for v in (1, 2.5, "3,75")]
""",
    ),
    B(
        "python_string_methods",
        """\
raw = "  Hello, World  "
(raw.strip().lower().replace("world", "there").title(),
 "a,b;c".replace(";", ",").split(","), "report_2024.csv".rsplit(".", 1)[0],
 "x".join(["1", "2"]), "abc".center(7, "*"), "north".startswith(("n", "s")))
""",
    ),
    B(
        "match_tuples",
        """\
def kind(point):
    match point:
        case (0, 0):
            return "origin"
        case (x, 0):
            return f"x-axis at {x}"
        case (_, y) if y < 0:
            return "below"
        case _:
            return "elsewhere"

[kind(p) for p in [(0, 0), (3, 0), (1, -2), (2, 2)]]
""",
    ),
    B(
        "assert_and_constants",
        """\
MIN_UNITS = 0
MAX_PRICE = 100.0
assert sales["units"].min() >= MIN_UNITS, "negative units"
assert sales["price"].max() <= MAX_PRICE
"ok"
""",
    ),
    B(
        "assign_chain",
        """\
(sales
 .assign(revenue=lambda d: d["units"] * d["price"],
         big=lambda d: d["units"] > 6)
 .groupby("big")["revenue"].sum()
 .rename(index={True: "big", False: "small"}))
""",
    ),
    B(
        "where_mask_clip",
        """\
units = sales["units"]
units.where(units > 4, 0).tolist(), units.mask(units > 8, 8).tolist(), units.clip(4, 8).tolist()
""",
    ),
    B(
        "top_n_per_group",
        """\
(sales.sort_values("units", ascending=False)
      .groupby("region", as_index=False)
      .head(1)[["region", "product", "units"]])
""",
    ),
    B(
        "value_counts_normalize",
        """\
sales["region"].value_counts(normalize=True).round(3).to_dict()
""",
    ),
    B(
        "records_roundtrip",
        """\
records = sales[["region", "units"]].to_dict(orient="records")
back = pd.DataFrame.from_records(records)
back.equals(sales[["region", "units"]].reset_index(drop=True)), records[0]
""",
    ),
    B(
        "sample_and_explode",
        """\
tags = pd.DataFrame({"id": [1, 2], "tags": [["a", "b"], ["c"]]})
tags.explode("tags").reset_index(drop=True), sales.sample(n=2, random_state=0).shape
""",
    ),
    B(
        "query_backticks_and_strings",
        """\
frame = sales.rename(columns={"dep_delay": "dep delay"})
frame.query("`dep delay` > 5 and region == 'north'")
""",
    ),
    B(
        "categorical_order",
        """\
size = pd.Categorical(["m", "s", "l", "m"], categories=["s", "m", "l"], ordered=True)
s = pd.Series(size)
s.sort_values().tolist(), (s > "s").sum(), s.cat.codes.tolist()
""",
    ),
    B(
        "interval_lookup",
        """\
bands = pd.IntervalIndex.from_breaks([0, 5, 10, 20])
pd.Series(["low", "mid", "high"], index=bands).loc[7], bands.contains(3).tolist()
""",
    ),
    B(
        "nested_comprehension_matrix",
        """\
matrix = [[r * c for c in range(1, 4)] for r in range(1, 4)]
transposed = [list(col) for col in zip(*matrix)]
flat = [v for row in matrix for v in row if v % 2]
matrix, transposed, flat
""",
    ),
    B(
        "exit_free_early_return",
        """\
def first_big(values, limit=6):
    for v in values:
        if v > limit:
            return v
    return None

first_big(sales["units"]), first_big([1, 2])
""",
    ),
    B(
        "named_agg_with_private_column",
        """\
events = pd.DataFrame({"_id": [1, 2, 3, 4], "user": ["a", "a", "b", "b"], "ms": [5, 7, 3, 9]})
events.groupby("user").agg(n=("_id", "count"), slowest=("ms", "max"), total=("ms", "sum"))
""",
    ),
    B(
        "agg_transform_by_name",
        """\
summary = sales.groupby("region").agg({"units": ["sum", "mean"], "price": "max"})
sales["cum_units"] = sales.groupby("region")["units"].transform("cumsum")
summary.shape, sales["cum_units"].tolist()
""",
    ),
    B(
        "methodcaller_literal",
        """\
from operator import methodcaller
upper = methodcaller("upper")
strip_x = methodcaller("strip", "x")
[upper(s) for s in ["a", "b"]], strip_x("xxhixx")
""",
    ),
    B(
        "arrow_ipc_buffer",
        """\
import pyarrow as pa
table = pa.Table.from_pandas(sales[["region", "units"]])
sink = pa.BufferOutputStream()
with pa.ipc.new_file(sink, table.schema) as writer:
    writer.write_table(table)
reader = pa.ipc.open_file(pa.BufferReader(sink.getvalue()))
reader.read_all().num_rows
""",
    ),
    B(
        "url_helpers",
        """\
import json
def build_url(base: str, path: str) -> str:
    return base.rstrip("/") + "/" + path.lstrip("/")

def api_path(*parts: str) -> str:
    return "/" + "/".join(parts)

print(build_url("https://api.example.com/", "/v1/orders"), api_path("api", "users"))
json.loads('{"home": "/home/ann", "site": "https://example.org"}')["site"]
""",
    ),
    B(
        "big_but_sane_sizes",
        """\
grid = np.zeros((1000, 1000))
line = "=" * 72
ids = list(range(100_000))
grid.size, len(line), ids[-1], 2 ** 64, 10 ** 18
""",
    ),
    B(
        "styler_bar_literal",
        """\
styled = sales.style.format({"price": "{:.2f}", "units": "{:d}"}).highlight_max(subset=["units"])
len(styled.to_html()) > 0
""",
        needs=("jinja2",),
    ),
]

ALL_BENIGN: list[Benign] = [*BENIGN, *EVERYDAY]
