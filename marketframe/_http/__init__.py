"""The HTTP layer: transport (pooled session, retries, deadline), pacer, cache, body reads and
the credential a client sends. Private to the package; ``marketframe.client`` is its user."""
