"""Diagnostics that look inside one zoo model when a backend gets it wrong (not part of a run)."""
