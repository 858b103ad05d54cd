"""File formats of staged files: detection, exact merging, ORC tails, column statistics."""
