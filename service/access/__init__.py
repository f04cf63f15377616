"""Who is calling the API (auth.py: the key, the project) and how fast (ratelimit.py), both checked
before every API request (guard.py)."""
