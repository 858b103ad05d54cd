"""What a user asks about a table: each partition's state, one partition's wait, whether a
partition is past its expiration, the partitions a sweep commits, and the table report the
status page shows."""
