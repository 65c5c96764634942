"""Evaluation of compiled plans over event streams."""
