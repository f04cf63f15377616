"""Organization settings → API: sign in, the organization's keys, generate (shown once),
revoke (after a confirmation), and the record of every key action.

The session (a signed cookie) holds the secret of a session the server keeps (sessions.py)
and the CSRF token, and nothing else: notices travel as query parameters naming a key id,
never a key. A new key is shown in the body of the POST that generated it and nowhere else,
ever.
"""

from __future__ import annotations

import functools
import math
import secrets

from flask import (
    Blueprint,
    abort,
    current_app,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from weblib import redirects

from ..org import admin, audit, keys
from ..org.accounts import check_credentials, fold_email
from ..store.db import begin_write, get_session
from ..store.models import ApiKey, Project, utcnow
from . import sessions
from .forms import ConfirmForm, GenerateKeyForm, SignInForm

bp = Blueprint("settings", __name__, url_prefix="/settings")

# The cookie's one value besides the CSRF token: the secret of the server's session row.
SESSION_KEY = "session"
RECENT_EVENTS = 8
EVENTS_PER_PAGE = 50


# --- who is signed in -------------------------------------------------------------------------


@bp.before_request
def load_user() -> None:
    g.user = None
    secret = session.get(SESSION_KEY)
    if secret is None:
        if session.get("user_id") is not None:  # a cookie from before 0024: it names no one
            session.clear()
        return
    user = sessions.user_of(get_session(), secret)
    if user is None:  # signed out, removed, a new password, or past its time
        session.clear()
    else:
        g.user = user


def holds_a_session() -> bool:
    """Whether the cookie carries a session's secret (not whether it still works: load_user
    looks that up)."""
    return isinstance(session.get(SESSION_KEY), str)


def start_session(db, user_id: int) -> None:
    """Inside a write transaction: the browser is signed in as this person with a fresh
    session (whatever was in its cookie before, a planted CSRF token included, is discarded,
    and the session it held, if any, ended). Commits."""
    sessions.end(db, session.get(SESSION_KEY))
    secret = sessions.start(db, user_id, current_app.permanent_session_lifetime)
    db.commit()
    session.clear()
    session[SESSION_KEY] = secret
    session.permanent = True


def signin_required(view):
    @functools.wraps(view)
    def wrapped(**kwargs):
        if g.user is None:
            target = safe_next(request.full_path.rstrip("?")) if request.method == "GET" \
                else None
            return redirect(url_for("settings.signin", next=target), 303)
        return view(**kwargs)

    return wrapped


def safe_next(value: str | None) -> str | None:
    """A page of the settings area to return to after signing in, or None: weblib's rule
    (weblib.redirects), within /settings/ and without the sign-in and sign-out pages and
    static files."""
    return redirects.safe_next(value, within="/settings/", refused=(
        "/settings/signin", "/settings/signout", "/settings/static/"))


# --- signing in and out -----------------------------------------------------------------------


@bp.get("")
@bp.get("/")
def home():
    return redirect(url_for("settings.api_keys") if g.user else url_for("settings.signin"))


def _signin_page(form, error: str | None = None, status: int = 200, headers=None):
    notice = None
    if request.args.get("signed_out"):
        notice = "You are signed out."
    elif safe_next(request.args.get("next")):
        notice = "Please sign in to see that page."
    return render_template("settings/signin.html", form=form, error=error, notice=notice,
                           next_url=safe_next(request.args.get("next"))), status, headers or {}


@bp.route("/signin", methods=["GET", "POST"])
def signin():
    next_url = safe_next(request.args.get("next"))
    form = SignInForm()
    if request.method == "GET":
        if g.user is not None:
            return redirect(next_url or url_for("settings.api_keys"))
        return _signin_page(form)

    # The throttle counts every attempt, before any password is looked at.
    email = request.form.get("email", "")[:1000]
    wait = current_app.extensions["tagdesk_settings_throttle"].attempt(
        request.remote_addr, fold_email(email))
    if wait:
        return _signin_page(
            form, f"Too many sign-in attempts. For your account's safety, please wait "
                  f"{_seconds(wait)} and then try again.", 429, {"Retry-After": str(wait)})
    if not form.validate():
        first = next(iter(form.errors.values()))[0]
        return _signin_page(form, first, 400)
    user = check_credentials(get_session(), form.email.data, form.password.data)
    if user is None:
        return _signin_page(form, "That email and password do not match an account. Check "
                                  "both and try again.", 401)
    # A fresh session for a fresh sign-in.
    db = get_session()
    user_id = user.id
    begin_write(db)
    start_session(db, user_id)
    return redirect(next_url or url_for("settings.api_keys"), 303)


@bp.post("/signout")
def signout():
    if holds_a_session():
        db = get_session()
        begin_write(db)
        sessions.end(db, session[SESSION_KEY])  # a copy of the cookie is worth nothing now
        db.commit()
    session.clear()
    return redirect(url_for("settings.signin", signed_out=1), 303)


# --- API keys ---------------------------------------------------------------------------------


def _projects() -> list[Project]:
    return list(get_session().scalars(
        select(Project).where(Project.org_id == g.user.org_id).order_by(Project.name, Project.id)))


def org_row(model, row_id):
    """The row of `model` (ApiKey, Project: a table with `org_id`) with this id, of the
    signed-in person's organization; any other id is 404 (never 403)."""
    row = get_session().scalar(
        select(model).where(model.id == row_id, model.org_id == g.user.org_id))
    if row is None:
        abort(404)
    return row


def _int_arg(name: str) -> int | None:
    value = request.args.get(name, "")
    return int(value) if value.isascii() and value.isdigit() and len(value) < 12 else None


@bp.get("/api")
@signin_required
def api_keys():
    db = get_session()
    rows = db.scalars(
        select(ApiKey).where(ApiKey.org_id == g.user.org_id)
        .order_by(ApiKey.revoked_at.is_not(None), ApiKey.created_at.desc(), ApiKey.id.desc())
    ).all()
    revoked_id = _int_arg("revoked")
    revoked = next((k for k in rows if k.id == revoked_id and k.revoked_at), None)
    return render_template(
        "settings/api.html", section="api", keys=rows,
        project_names={p.id: p.name for p in _projects()},
        events=audit.events(db, g.user.org_id, RECENT_EVENTS),
        more_events=audit.count(db, g.user.org_id) > RECENT_EVENTS,
        revoked=revoked,
    )


def _generate_form() -> GenerateKeyForm:
    form = GenerateKeyForm()
    form.project.choices = [("", "All projects")] + [(p.id, p.name) for p in _projects()]
    return form


@bp.get("/api/generate")
@signin_required
def generate_form():
    form = _generate_form()
    form.form_token.data = secrets.token_urlsafe(24)
    return render_template("settings/generate.html", section="api", form=form)


@bp.post("/api/generate")
@signin_required
def generate():
    form = _generate_form()
    if not form.validate():
        return render_template("settings/generate.html", section="api", form=form), 400
    db = get_session()
    token = form.form_token.data
    if audit.event_for_form(db, token) is not None:
        return _already_generated(token)
    begin_write(db)
    try:
        key = admin.create_key(db, g.user.org_id, current_app.config["KEY_PREFIX"],
                               form.project.data or None, form.name.data)
        api_key = audit.key_by_value(db, key)
        audit.record(db, api_key, audit.GENERATED, g.user.id, form_token=token)
        db.commit()
    except admin.AdminError as error:
        db.rollback()
        form.project.errors = [str(error)]
        return render_template("settings/generate.html", section="api", form=form), 400
    except IntegrityError:
        db.rollback()  # the same form, submitted twice at once: the other one made the key
        return _already_generated(token)
    project_names = {p.id: p.name for p in _projects()}
    # The only time the key is ever shown: in this response's body (Cache-Control: no-store).
    return render_template("settings/generated.html", section="api", key=key, api_key=api_key,
                           scope=project_names.get(api_key.project_id, "All projects")
                           if api_key.project_id else "All projects")


def _already_generated(token: str):
    event = audit.event_for_form(get_session(), token)
    if event is None or event.org_id != g.user.org_id:
        abort(400)
    return render_template("settings/already.html", section="api", event=event)


@bp.route("/api/<id:key_id>/revoke", methods=["GET", "POST"])
@signin_required
def revoke(key_id: int):
    api_key = org_row(ApiKey, key_id)
    form = ConfirmForm()
    if request.method == "GET" or api_key.revoked_at is not None:
        project_names = {p.id: p.name for p in _projects()}
        return render_template("settings/revoke.html", section="api", key=api_key, form=form,
                               scope=project_names.get(api_key.project_id, "All projects"))
    db = get_session()
    begin_write(db)
    api_key = org_row(ApiKey, key_id)  # read again inside the write transaction
    if api_key.revoked_at is None:
        api_key.revoked_at = utcnow()
        audit.record(db, api_key, audit.REVOKED, g.user.id)
    db.commit()
    return redirect(url_for("settings.api_keys", revoked=api_key.id), 303)


# --- activity ---------------------------------------------------------------------------------


@bp.get("/activity")
@signin_required
def activity():
    db = get_session()
    total = audit.log_count(db, g.user.org_id)
    pages = max(1, math.ceil(total / EVENTS_PER_PAGE))
    page = min(max(_int_arg("page") or 1, 1), pages)
    entries = audit.log(db, g.user.org_id, EVENTS_PER_PAGE, (page - 1) * EVENTS_PER_PAGE)
    return render_template("settings/activity.html", section="activity", entries=entries,
                           page=page, pages=pages, total=total)


# --- template helpers ---------------------------------------------------------------------------


@bp.app_template_filter("masked")
def masked(api_key) -> str:
    return keys.mask(api_key.prefix, api_key.last_four)


@bp.app_template_filter("utc")
def utc(moment) -> str:
    return moment.strftime("%-d %b %Y, %H:%M UTC") if moment else ""


@bp.app_template_filter("iso")
def iso(moment) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else ""


def _seconds(value: int) -> str:
    return "1 second" if value == 1 else f"{value} seconds"
