"""Sign in with the organization's API key; sign out.

The key is checked by listing the projects (the cheapest call every key may make), then kept
in the server-side session store only (dashboard/signin.py).
"""

from __future__ import annotations

import logging
import secrets

from flask import Blueprint, current_app, flash, redirect, request, session, url_for
from flask_login import current_user, login_user

from dashboard import apiclient
from dashboard.signin import (
    LONGEST_KEY,
    SESSION_NAME,
    SignedIn,
    display_name_from_form,
    end_session,
    next_for,
    render_signin,
    safe_next,
    start_session,
    throttle,
)
from queryapi import ApiError, AuthError, RateLimited, TransportError, Unavailable

log = logging.getLogger(__name__)

bp = Blueprint("auth", __name__)


@bp.route("/signin", methods=["GET", "POST"])
def signin():
    next_url = safe_next(request.args.get("next"))
    if request.method == "GET":
        if current_user.is_authenticated:
            return redirect(next_url or url_for("projects.home"))
        return render_signin()

    wait = throttle().attempt(request.remote_addr)
    if wait:
        return render_signin(f"Too many sign-in attempts from your network. Please wait "
                             f"{_seconds(wait)}, then try again.", 429,
                             {"Retry-After": str(wait)})

    if request.form.get("demo"):
        key = current_app.config.get("DEMO_KEY")
        if not key:
            return render_signin("This Tagdesk has no demo key. Please sign in with your "
                           "organization's API key.", 400)
    else:
        key = (request.form.get("api_key") or "").strip()
        if not key:
            return render_signin("Please enter your API key.", 400)
        if len(key) > LONGEST_KEY:
            return render_signin("That is not an API key: it is far too long. Please copy the key "
                           "again.", 400)

    uid = secrets.token_urlsafe(24)
    name = display_name_from_form()
    try:
        client = apiclient.client_for_key(uid, key, name or None)
        projects = client.all_projects()
    except AuthError:
        apiclient.forget(uid)
        return render_signin("That API key was not accepted. Check that you copied all of it, or "
                       "ask for a new one if it was revoked.", 401)
    except RateLimited as error:
        apiclient.forget(uid)
        return render_signin(f"The service is busy right now. Please try again in "
                       f"{_seconds(error.retry_after)}.", 429)
    except Unavailable as error:
        apiclient.forget(uid)
        return render_signin(f"The service is temporarily unavailable. Please try again in "
                       f"{_seconds(error.retry_after)}.", 503)
    except TransportError:
        apiclient.forget(uid)
        return render_signin("The Tagdesk service cannot be reached right now. Please try again "
                       "in a little while.", 502)
    except ApiError:
        apiclient.forget(uid)
        log.warning("sign-in check failed with an unexpected API error", exc_info=False)
        return render_signin("Signing in did not work because the service answered unexpectedly. "
                       "Please try again.", 502)

    masked = client.masked_key
    start_session(uid, key, masked)
    if name:
        session[SESSION_NAME] = name
    apiclient.remember_projects(uid, key, projects)
    login_user(SignedIn(uid, masked))
    if next_url and next_for(next_url, {project.id for project in projects}) is None:
        flash("That page belongs to a project this key cannot open. Here are the projects "
              "of the key you signed in with.", "info")
        return redirect(url_for("projects.index"), 303)
    return redirect(next_url or url_for("projects.home"), 303)


@bp.post("/signout")
def signout():
    end_session("You are signed out.", "success")
    return redirect(url_for("auth.signin"), 303)


def _seconds(value: float) -> str:
    whole = max(1, round(value))
    return "1 second" if whole == 1 else f"{whole} seconds"
