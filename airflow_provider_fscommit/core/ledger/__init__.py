"""The ledger and what keeps it: the table lock, quarantine, staging retention, expiration."""
