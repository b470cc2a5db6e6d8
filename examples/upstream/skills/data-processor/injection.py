"""What the data-processor skill adds to the runtime when it is activated."""

from cave_tui.runtime import Variable

sales_data = [
    {"amount": 800, "category": "electronics", "region": "north"},
    {"amount": 250, "category": "clothing", "region": "south"},
    {"amount": 1200, "category": "furniture", "region": "north"},
    {"amount": 150, "category": "groceries", "region": "east"},
    {"amount": 950, "category": "electronics", "region": "west"},
    {"amount": 320, "category": "clothing", "region": "north"},
]

regional_targets = {"north": 2000, "south": 1500, "east": 1000, "west": 1200}

__exports__ = [
    Variable(
        "sales_data",
        value=sales_data,
        description="list of sales, each a dict with keys amount, category, region",
    ),
    Variable(
        "regional_targets",
        value=regional_targets,
        description="dict: region (north, south, east, west) -> sales target",
    ),
]
