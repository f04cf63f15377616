"""Who is signed in, and the ways in and out that pages and error handlers share.

flask-login's user is the signed-in session itself (Tagdesk knows only organization keys),
identified by a random id that lives as long as the session. The key is kept in the
server-side session store only; the cookie carries the session id, which is replaced at
sign-in so a planted id is worth nothing.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import (
    current_app,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_login import LoginManager, UserMixin, current_user, logout_user
from werkzeug.exceptions import HTTPException

from weblib import redirects
from weblib.tag_names import usable_name
from weblib.throttle import Throttle

from . import apiclient
from .htmx import hx_redirect, is_htmx, page_on_screen
from .viewstate import clean_text

login_manager = LoginManager()

SESSION_UID = "uid"
SESSION_MASKED = "masked_key"
SESSION_NAME = apiclient.SESSION_NAME
LONGEST_NAME = 80
LONGEST_KEY = 500
KEY_HINT = "tdk_live_"


class SignedIn(UserMixin):
    """The signed-in session (not a person: Tagdesk knows only organization keys)."""

    def __init__(self, uid: str, masked_key: str):
        self.id = uid
        self.masked_key = masked_key


@login_manager.user_loader
def _load(uid: str) -> SignedIn | None:
    if session.get(SESSION_UID) == uid and session.get(apiclient.SESSION_KEY):
        return SignedIn(uid, session.get(SESSION_MASKED) or "…")
    return None


def is_signed_in() -> bool:
    return bool(current_user.is_authenticated)


def asks_for_data() -> bool:
    """A script's request for data, never shown as a page (counts.js's counts: Accept:
    application/json): a redirect would be followed by the script itself, and the sign-in
    page it fetched would take the sentence meant for the person."""
    return not is_htmx() and request.accept_mimetypes.best == "application/json"


def to_signin(target: str | None):
    """Send the person to sign in, then back to `target`: a whole page for htmx, a 401 naming
    the sign-in address for a script's request for data (the page stays as it is; its next
    step comes here again), else a redirect."""
    url = url_for("auth.signin", next=target) if target else url_for("auth.signin")
    if is_htmx():
        return hx_redirect(url)
    if asks_for_data():
        response = jsonify(signin=url)
        response.status_code = 401
        response.headers["Cache-Control"] = "no-store"
        return response
    return redirect(url, 303)


def signin_redirect_for_htmx():
    return to_signin(_page_target())


def safe_referrer() -> str | None:
    """The page a form was posted from, if it is one of ours."""
    parts = urlsplit(request.referrer or "")
    if parts.netloc and parts.netloc != request.host:
        return None
    return safe_next(parts.path + ("?" + parts.query if parts.query else ""))


@login_manager.unauthorized_handler
def _unauthorized():
    if is_htmx() or asks_for_data():
        return to_signin(_page_target())
    target = safe_next(next_target()) if request.method == "GET" else safe_referrer()
    if target == url_for("projects.home"):
        target = None
    if target:
        flash("Please sign in to see that page.", "info")
    return redirect(url_for("auth.signin", next=target) if target else url_for("auth.signin"))


# --- where to go after signing in ------------------------------------------------------------


def safe_next(value: str | None) -> str | None:
    """A page of the dashboard to return to after signing in, or None: weblib's rule
    (weblib.redirects), without the sign-in and sign-out pages, the API and static files."""
    return redirects.safe_next(value, refused=(
        url_for("auth.signin"), url_for("auth.signout"), "/api/", "/static/"))


def next_for(next_url: str | None, project_ids: set[str]) -> str | None:
    """`next_url` unless it is a page of a project the signed-in key cannot see (a link kept
    from a session with another organization's key): then None, and the key's own start."""
    if not next_url:
        return None
    try:
        _endpoint, args = current_app.url_map.bind("").match(urlsplit(next_url).path)
    except HTTPException:
        return next_url
    if "project_id" in args and args["project_id"] not in project_ids:
        return None
    return next_url


def next_target() -> str:
    """The page asked for: for htmx requests the view's URL is the request's own (the
    dashboard's partials share their page's URL)."""
    return request.full_path.rstrip("?") if request.query_string else request.path


# --- throttling -----------------------------------------------------------------------------


def throttle() -> Throttle:
    """At most SIGNIN_LIMIT sign-in attempts per client address (memory, or Redis if
    configured): `throttle().attempt(address)`."""
    return current_app.extensions["tagdesk_signin_throttle"]


def display_name_from_form() -> str:
    """The optional name people give at sign-in (shown in the activity log), as a name may
    hold it: it is sent with every change (X-Tagdesk-Actor), which the service refuses
    otherwise."""
    return usable_name(clean_text(request.form.get("display_name") or "", LONGEST_NAME))


def render_signin(error: str | None = None, status: int = 200, headers: dict | None = None):
    next_url = safe_next(request.args.get("next"))
    return render_template(
        "auth/signin.html",
        error=error,
        display_name=display_name_from_form() if request.method == "POST" else "",
        next_url=next_url,
        demo_available=bool(current_app.config.get("DEMO_KEY")),
        key_hint=KEY_HINT,
    ), status, headers or {}


def start_session(uid: str, key: str, masked: str) -> None:
    """A new session id for a new sign-in: whatever was there before is discarded."""
    old_uid = session.get(SESSION_UID)
    session.clear()
    session[apiclient.SESSION_KEY] = key
    session[SESSION_UID] = uid
    session[SESSION_MASKED] = masked
    current_app.session_interface.regenerate(session)
    if old_uid and old_uid != uid:
        apiclient.forget(old_uid)


def end_session(message: str | None = None, category: str = "info") -> None:
    """Sign out: the server-side data goes, the session id changes, the client is closed."""
    apiclient.forget(session.get(SESSION_UID))
    logout_user()
    session.clear()
    if message:
        flash(message, category)
    current_app.session_interface.regenerate(session)


def key_rejected_response():
    """The key stopped working mid-session (revoked): back to sign-in, with a sentence, and
    then back to this very view."""
    target = _page_target()
    end_session("Your API key is no longer accepted — it may have been revoked. Please sign "
                "in again.", "warning")
    return to_signin(target)


def _page_target() -> str | None:
    """Where to come back to after signing in: the page asked for, or for a part of a page or
    a script's request, the page on screen."""
    if asks_for_data():
        return safe_referrer()
    if request.method == "GET":
        return safe_next(next_target())
    return safe_next(page_on_screen())


def init_app(app) -> None:
    login_manager.init_app(app)
    login_manager.session_protection = "basic"
    storage = app.config["REDIS_URL"] or "memory://"
    app.extensions["tagdesk_signin_throttle"] = Throttle(
        storage, [(app.config["SIGNIN_LIMIT"], ("tagdesk-signin",))])
