"""The store's manifest: what it holds, per dataset and symbol, and each file's record."""
