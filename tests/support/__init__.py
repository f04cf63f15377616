"""Helpers the tests share, imported as ordinary modules (never from a conftest).

One module a job:

    switches    whether an optional suite was asked for (TAGDESK_TEST_*)
    databases   PostgreSQL and Redis addresses, databases of a test's own, the service's URL
    servers     a WSGI app on a free loopback port (LiveServer), and live servers of a test's apps
    world       an organization with keys, projects and tags made through the admin layer, and
                a smaller one (small_org)
    api         requests against a live service with a key and project preset
    answers     what tests assert of the service's answers: a bad request's error object,
                another organization's record not found, an extension in the OpenAPI document
    openapi     docs/openapi.yaml and the response checks every schemathesis run makes
    clients     options of queryapi clients in tests
    dashboard   the dashboard app in tests: closing it, CSRF tokens, signing in, sample data
    e2e         the live dashboard of the browser tests and organizations of their own
    security    hostile visitors, live sites and organizations of the security tests
    scaleout    processes, databases and Redis names of the scale-out topology
    processes   a process group stopped; workers forked to start at the same moment
    waiting     bounded waits for a condition or a job's state (instead of fixed sleeps)

The conftest files hold the fixtures and import what they need from here.
"""
