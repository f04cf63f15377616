"""Two servers that do no work, for `bench_facets.py --floor`: what a request costs under the
same gunicorn before any of the service's own work (a bare WSGI callable, then Flask)."""

from flask import Flask, jsonify


def bare(environ, start_response):
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", "2")])
    return [b"{}"]


flask_app = Flask(__name__)


@flask_app.get("/")
def empty():
    return jsonify({})
