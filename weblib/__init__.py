"""Web plumbing both web UIs share — the dashboard and the service's settings area: private
files such as signing keys, security headers, static URLs, the SQLite engine's set-up and
sign-in throttles. It imports neither of them."""
