"""Notations."""
