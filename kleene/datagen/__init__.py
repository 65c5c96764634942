"""Workload generators for the papers' experiments.

Each generator is deterministic for a seed and returns a :class:`pyarrow.Table` of events.
"""

from kleene.datagen.hadoop import generate as generate_hadoop
from kleene.datagen.stock import StockParams
from kleene.datagen.stock import generate as generate_stock

__all__ = ["StockParams", "generate_hadoop", "generate_stock"]
