"""The JSON API under /api: its routes (routes.py), the work behind each endpoint, and the HTTP
behaviour of every response (protocol.py)."""
