"""Task groups: the provider's operators wired together the way most DAGs need them."""
