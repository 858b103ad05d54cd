"""What a user asks about a table: each partition's state, one partition's wait, whether a
partition is past its expiration, the partitions a sweep commits, the table report the
status page shows, and what a table's spec would be, inferred from what its stream wrote."""
