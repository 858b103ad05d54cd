"""The ``fscommit`` command line, for a person at a terminal."""
