"""Table maintenance: expiration, staging retention and quarantine.

Each is an operation on a whole table that reads the status (which files are committed,
published, orphaned, past their expiration) and writes the ledger under the table lock, so
it sits above both: the record store knows nothing of the operations that keep it.
"""
