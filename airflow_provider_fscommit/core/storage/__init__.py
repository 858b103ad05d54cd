"""Storage: locations, filesystems, object stores and conditional (create-once) writes."""
