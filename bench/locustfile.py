"""Locust: people signed in to the dashboard, clicking through one project's queries page.

Run by bench/bench_dashboard_load.py, which starts the service and the dashboard and says what
to do through environment variables:

    TAGDESK_LOAD_KEY       the organization's API key (every user signs in with it, so all of
                           them share the organization's rate limits)
    TAGDESK_LOAD_PROJECT   the project's id
    TAGDESK_LOAD_USERS     how many users sign in before anyone starts clicking
    TAGDESK_LOAD_SECONDS   how long the measured part lasts (from the moment all are signed in)
    TAGDESK_LOAD_THINK     seconds between a page arriving and the next click: "0" or "1-3"
    TAGDESK_LOAD_OUT       a JSON file for the measurements

A click asks for a view as an htmx partial (three times in four) or as a whole page. When the
dashboard answers 429 (the service asked it to wait, and the wait was longer than it waits on
its own), the user does what the page does in a browser: it shows the notice, counts down
Retry-After seconds and loads the view again as a whole page. Every click is recorded: its
answers, their times, the Server-Timing split, the waits, and the time until the page arrived.
Anything other than a page or a busy notice is an error, recorded by kind — except that a GET
sent on an idle kept-alive connection the dashboard closed at that moment is sent again once on
a new connection, as browsers do (counted as "hung up").
"""

from __future__ import annotations

import json
import os
import random
import re
import time

import gevent
from gevent.event import Event
from locust import HttpUser, events, task

KEY = os.environ.get("TAGDESK_LOAD_KEY", "")
PROJECT_ID = os.environ.get("TAGDESK_LOAD_PROJECT", "")
USERS = int(os.environ.get("TAGDESK_LOAD_USERS", "20"))
SECONDS = float(os.environ.get("TAGDESK_LOAD_SECONDS", "30"))
THINK = tuple(float(part) for part in os.environ.get("TAGDESK_LOAD_THINK", "0").split("-"))
OUT = os.environ.get("TAGDESK_LOAD_OUT", "")

VIEWS = ["", "page=2", "page=40", "q=running", "q=damen", "lang=de", "lang=fr&lang=es",
         "country=GB", "tag=high%20intent", "q=schuhe&lang=de&tag=product", "sort=query",
         "sort=-country", "sort=updated&page=3"]
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
TIMING = re.compile(r"(\w+);dur=([0-9.]+)")
# The dashboard's 429 (a page, or a notice for htmx) says this and counts down Retry-After.
BUSY = ("asked us to wait a moment", "data-retry-after=")
SENTENCE = re.compile(r"<p>([^<]+)</p>")
RESULTS = 'id="results"'
# A kept-alive connection closed by the server just as a request went out on it.
HUNG_UP = ("RemoteDisconnected", "Connection reset by peer", "BrokenPipe")

everyone_signed_in = Event()
state = {"signed_in": 0, "start": None, "end": None, "clicks": [], "signins": []}


def _think() -> float:
    return random.uniform(*THINK) if len(THINK) == 2 else THINK[0]


def _retry_after(response) -> float | None:
    try:
        return float(response.headers["Retry-After"])
    except (KeyError, ValueError):
        return None


class Person(HttpUser):
    def wait_time(self) -> float:
        return _think()

    def on_start(self) -> None:
        started = time.time()
        attempts = []
        while True:
            token = CSRF.search(self.client.get("/signin", name="sign-in form").text).group(1)
            answer = self.client.post("/signin", data={"csrf_token": token, "api_key": KEY},
                                      name="sign in", allow_redirects=False)
            attempts.append(answer.status_code)
            if answer.status_code == 303:
                break
            # A busy service at sign-in: the page says how long to wait; wait and retry.
            gevent.sleep(max(1.0, _retry_after(answer) or 1.0))
        state["signins"].append({"seconds": time.time() - started, "answers": attempts})
        state["signed_in"] += 1
        if state["signed_in"] >= USERS and not everyone_signed_in.is_set():
            state["start"] = time.time()
            everyone_signed_in.set()
            gevent.spawn_later(SECONDS, self._stop)
        everyone_signed_in.wait()

    def _stop(self) -> None:
        state["end"] = time.time()
        self.environment.runner.quit()

    @task
    def click(self) -> None:
        view = random.choice(VIEWS)
        partial = random.random() < 0.75
        url = f"/projects/{PROJECT_ID}/queries" + ("?" + view if view else "")
        click = {"view": view, "partial": partial, "at": time.time(), "answers": []}
        state["clicks"].append(click)
        resent = False
        while True:
            headers = {"HX-Request": "true"} if partial else {}
            name = "queries: partial" if partial else "queries: page"
            sent = time.time()
            try:
                with self.client.get(url, headers=headers, name=name,
                                     catch_response=True) as response:
                    answer = self._classify(response, forgive_hang_up=not resent)
            except Exception as error:  # noqa: BLE001 (a dropped connection is an error kind)
                answer = {"kind": f"error: {type(error).__name__}"}
            answer["ms"] = (time.time() - sent) * 1000
            click["answers"].append(answer)
            if answer["kind"] == "hung up":
                # An idle kept-alive connection the dashboard closed as this request went out:
                # browsers send the GET again on a new connection (RFC 9112, 9.3.1); so do we,
                # once.
                resent = True
                continue
            if answer["kind"] != "busy":
                break
            # As retry.js does: count down Retry-After, then load the view as a whole page.
            gevent.sleep(answer["retry_after"])
            partial = False
        click["done"] = time.time()

    @staticmethod
    def _classify(response, forgive_hang_up: bool) -> dict:
        body = response.text or ""
        if response.status_code == 200 and RESULTS in body:
            response.success()
            timing = {name: float(value)
                      for name, value in TIMING.findall(response.headers.get("Server-Timing",
                                                                              ""))}
            return {"kind": "page", "api": timing.get("api"), "cpu": timing.get("cpu")}
        retry_after = _retry_after(response)
        if response.status_code == 429 and all(mark in body for mark in BUSY) and retry_after:
            response.success()  # the service's own 429, shown as a notice: not an error
            return {"kind": "busy", "retry_after": retry_after}
        detail = None
        if response.status_code == 0 and forgive_hang_up and any(
                sign in str(response.error) for sign in HUNG_UP):
            response.success()  # sent again at once, as a browser does
            return {"kind": "hung up", "detail": str(response.error)[:300]}
        if response.status_code == 0:  # no answer: the connection failed or was dropped
            kind = f"no answer: {type(response.error).__name__}"
            detail = str(response.error)[:300]
        else:
            kind = f"HTTP {response.status_code}"
            sentence = SENTENCE.search(body)  # the dashboard's error pages and notices say one
            detail = sentence.group(1) if sentence else body[:300]
        response.failure(kind)
        return {"kind": kind, "detail": detail}


@events.quitting.add_listener
def _write(environment, **_kwargs) -> None:
    if OUT:
        state["end"] = state["end"] or time.time()
        with open(OUT, "w", encoding="utf-8") as handle:
            json.dump({key: state[key] for key in ("start", "end", "clicks", "signins")},
                      handle)
