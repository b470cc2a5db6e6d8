"""Model-written objects whose own methods never return (issue 29, items 4 and 5)."""

# A cell binding `lazy`: its `__len__`, `__sizeof__` and `shape` loop for ever. Nothing cave
# runs around a cell (fingerprints, size estimates, summaries) may call any of them.
LAZY = """
class Lazy:
    def __len__(self):
        while True:
            pass
    def __sizeof__(self):
        while True:
            pass
    @property
    def shape(self):
        while True:
            pass
lazy = Lazy()
"""
