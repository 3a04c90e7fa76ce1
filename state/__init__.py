"""Typed state files of a formalization repository, written atomically."""
