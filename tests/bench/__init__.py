"""Benchmarks, run by `make bench` (not collected by pytest)."""
