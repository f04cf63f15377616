"""Suggested tags: a model learned per project from the queries its people tagged (and the
suggestions they rejected), and the scoring of many queries against it. A library of plain
values and numpy arrays: no Flask, no HTTP bodies, no database (docs/architecture.md)."""
