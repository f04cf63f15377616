"""Options of queryapi clients in tests."""

# Background clients in tests wait fractions of a second where production waits seconds.
FAST = dict(unavailable_wait=0.05, backoff_factor=0.01, retries=3)
