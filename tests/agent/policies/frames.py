"""Small lookup and fact frames the answer-check tests share."""

import pandas as pd

AIRPORTS = pd.DataFrame(
    {
        "faa": ["JFK", "LGA", "EWR", "ORD", "ATL"],
        "name": ["Kennedy", "La Guardia", "Newark", "Chicago Ohare", "Atlanta"],
        "tzone": ["NY", "NY", "NY", "Chicago", "NY"],
    }
)

AIRLINES = pd.DataFrame({"carrier": ["AA", "UA"], "name": ["American", "United"]})

FLIGHTS = pd.DataFrame(
    {
        "origin": ["JFK", "LGA", "JFK", "EWR", "JFK", "JFK"],
        "dest": ["ORD", "ATL", "LGA", "EWR", "XXX", "ORD"],  # XXX: not in airports
        "distance": [740, 762, 760, 719, 100, 740],
    }
)
