"""Timestamp parsing, kept importable here for the writers, readers and importers that take
it from this module; the code is part of the date engine, ``madeleine.text.dates``."""

from madeleine.text.dates.timestamps import from_epoch, parse_timestamp, to_epoch

__all__ = ["from_epoch", "parse_timestamp", "to_epoch"]
