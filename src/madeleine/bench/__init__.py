"""Benchmarks: dataset loaders, retrieval metrics and runners behind `madeleine bench`."""
