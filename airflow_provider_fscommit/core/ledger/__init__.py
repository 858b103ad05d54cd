"""The ledger: the table's record store (plans, commits, policy commits, quarantines,
expirations; created once, never overwritten) and the table lock that orders its writers."""
