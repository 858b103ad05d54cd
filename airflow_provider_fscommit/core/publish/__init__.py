"""Publishing, exactly once: the publisher that compacts a partition's staged files and
gives the outputs their visible names, what a published partition is (the facts every
commit policy and catalog is given), and retiring the files a committed rewrite replaced.

It sits between ``status`` (what is committable) and ``commit`` (the policies that make a
published partition visible): the folders follow the data, compaction → publish → commit."""
