"""Web plumbing both web UIs share — the dashboard and the service's settings area: private
files such as signing keys, security headers, static URLs, the SQLite engine's set-up,
sign-in throttles and colour contrast. It imports neither of them."""
