"""Organization settings → People: the organization's administrators, adding one (with a
one-time link to choose their own password, or a password typed now) and removing one (after
a confirmation; never the last; removing yourself signs you out).

A one-time link is shown once, in the body of the POST that made it, like a new API key; the
database keeps only its hash (password_links.py). Its page, /settings/password#<token>, needs
no sign-in: the link is the credential, and it works once. The token is in the fragment, which
no request line carries: the page sends it in the body of a POST. Every change is recorded in the
activity log, in the same transaction as the change.
"""

from __future__ import annotations

import re
import secrets

from flask import abort, g, redirect, render_template, request, session, url_for
from sqlalchemy import delete, func, select, update
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..org import admin, audit
from ..org.accounts import create_user, fold_email, hash_password
from ..store.db import begin_write, get_session
from ..store.models import KeyEvent, Organization, OrgEvent, PasswordLink, User, utcnow
from . import password_links, sessions
from .forms import LINK, METHODS, AddPersonForm, ConfirmForm, SetPasswordForm
from .views import bp, signin_required, start_session

LAST_ONE = ("{email} is the only administrator of {org}, so they cannot be removed: an "
            "organization always keeps at least one. Add another administrator first.")
LINK_PROBLEMS = {
    None: ("This link does not work",
           "This link is not one of ours, or it was cut short. Check that you opened the whole "
           "link, or ask an administrator of your organization for a new one.", 404),
    password_links.State.USED: (
        "This link has already been used",
        "A link to choose a password works only once, and this one was used. Sign in with "
        "the password chosen then, or ask an administrator of your organization for help.",
        410),
    password_links.State.EXPIRED: (
        "This link has expired",
        f"A link to choose a password works for {password_links.LINK_DAYS} days, and this "
        "one is older. Ask an administrator of your organization for a new link.", 410),
}


# --- the list ---------------------------------------------------------------------------------


def _members() -> list[User]:
    return list(get_session().scalars(
        select(User).where(User.org_id == g.user.org_id).order_by(User.created_at, User.id)))


def _count(db, org_id: str) -> int:
    return db.scalar(select(func.count()).select_from(User).where(User.org_id == org_id)) or 0


def _number(name: str) -> int | None:
    value = request.args.get(name, "")
    return int(value) if value.isdigit() and len(value) < 12 else None


def _notice() -> str | None:
    """The sentence a redirect to the list asked for (by id: never an email in the address)."""
    db = get_session()
    if request.args.get("welcome"):
        return "Your password is set, and you are signed in."
    if (added := _number("added")) is not None:
        person = db.scalar(select(User).where(User.id == added, User.org_id == g.user.org_id))
        if person is not None:
            return (f"{person.email} is an administrator now. They sign in with the password "
                    f"you typed: tell it to them in a safe way.")
    if (chosen := _number("chosen")) is not None:
        person = db.scalar(select(User).where(User.id == chosen, User.org_id == g.user.org_id))
        if person is not None:
            return (f"{person.email} has chosen their password already: they need no link. "
                    "If they forgot it, remove them and add them again.")
    if (removed := _number("removed")) is not None:
        event = db.scalar(select(OrgEvent).where(
            OrgEvent.id == removed, OrgEvent.org_id == g.user.org_id,
            OrgEvent.action == "person.removed"))
        if event is not None:
            return f"{event.subject} is no longer an administrator."
    return None


@bp.get("/people")
@signin_required
def people():
    members = _members()
    return render_template(
        "settings/people.html", section="people", members=members, notice=_notice(),
        waiting=password_links.waiting(get_session(), [m.id for m in members]), now=utcnow())


# --- adding -----------------------------------------------------------------------------------


class RemovedMeanwhile(Exception):
    """The signed-in person was removed by someone else while their request waited."""


REMOVED_MEANWHILE = (
    "You are no longer an administrator",
    "Another administrator removed you from {org} a moment ago, while your change was on "
    "its way, so your change was not made. If you need to be an administrator again, ask "
    "one of them to add you.")


def _lock_organization(db: Session, org_id: str) -> Organization:
    """Inside a write transaction: changes to one organization's people, one at a time
    (SQLite's write lock already does this; PostgreSQL locks the organization's row). The
    signed-in person must still be one of them (RemovedMeanwhile): two administrators who
    remove each other at the same moment are taken one after the other, and the second finds
    themselves gone."""
    me = sa_inspect(g.user).identity[0]  # known without reading the row, which may be gone
    db.expire_all()  # what was read before this transaction may have changed
    org = db.scalar(select(Organization).where(Organization.id == org_id).with_for_update())
    if db.scalar(select(User.id).where(User.id == me, User.org_id == org_id)) is None:
        raise RemovedMeanwhile(org.name if org is not None else "your organization")
    return org


@bp.errorhandler(RemovedMeanwhile)
def _removed_meanwhile(error: RemovedMeanwhile):
    get_session().rollback()
    session.clear()  # their sessions went with them
    g.user = None
    heading, sentence = REMOVED_MEANWHILE
    return render_template("settings/error.html", heading=heading, status=409,
                           sentence=sentence.format(org=error.args[0])), 409


def _taken(db, email: str) -> str | None:
    existing = db.scalar(select(User).where(User.email == email))
    if existing is None:
        return None
    if existing.org_id == g.user.org_id:
        return (f"{email} is already an administrator here. If their one-time link was lost "
                f"or has expired, give them a new one from the list (New link).")
    return f"There is already a Tagdesk account for {email}, in another organization."


def _add_page(form, status: int = 200):
    return render_template("settings/person_add.html", section="people", form=form,
                           methods=METHODS, days=password_links.LINK_DAYS), status


@bp.route("/people/add", methods=["GET", "POST"])
@signin_required
def add_person():
    form = AddPersonForm()
    if request.method == "GET":
        return _add_page(form)
    if not form.validate():
        return _add_page(form, 400)
    email = fold_email(form.email.data)
    with_link = form.method.data == LINK
    db = get_session()
    begin_write(db)
    org = _lock_organization(db, g.user.org_id)
    problem = _taken(db, email)
    if problem is None:
        try:
            # Added with a link: a random password nobody knows, until they choose theirs.
            password = secrets.token_urlsafe(32) if with_link else form.password.data
            user_id = create_user(db, org.id, email, password)
            token, link = password_links.issue(db, user_id) if with_link else (None, None)
            audit.record_change(
                db, org.id, "person.added", email,
                "With a one-time link to choose their password." if with_link
                else "With a password typed by whoever added them.", user_id=g.user.id)
            db.commit()
        except admin.AdminError as error:
            db.rollback()
            problem = str(error)
        except IntegrityError:
            db.rollback()  # the same address, added at the same moment by someone else
            problem = _taken(db, email) or "That email address could not be added. Try again."
    if problem is not None:
        db.rollback()
        form.email.errors = [problem]
        return _add_page(form, 409)
    if not with_link:
        return redirect(url_for("settings.people", added=user_id), 303)
    return _link_page(email, token, link)


def _link_page(email: str, token: str, link: PasswordLink, renewed: bool = False):
    # The only time the link is ever shown: in this response's body (Cache-Control: no-store).
    return render_template("settings/person_link.html", section="people", email=email,
                           link=url_for("settings.password_link", _external=True) + "#" + token,
                           expires_at=link.expires_at, days=password_links.LINK_DAYS,
                           renewed=renewed)


@bp.post("/people/<id:user_id>/link")
@signin_required
def renew_link(user_id: int):
    """A new one-time link for someone who has not chosen their password yet (theirs expired,
    or was lost); the links they had stop working."""
    if not ConfirmForm().validate():
        abort(400)
    db = get_session()
    begin_write(db)
    org = _lock_organization(db, g.user.org_id)
    person = _org_person(db, user_id)
    if person is None:
        db.rollback()
        abort(404)
    if person.id not in password_links.waiting(db, [person.id]):
        db.rollback()
        return redirect(url_for("settings.people", chosen=person.id), 303)
    db.execute(delete(PasswordLink).where(PasswordLink.user_id == person.id))
    token, link = password_links.issue(db, person.id)
    audit.record_change(db, org.id, "person.link_renewed", person.email,
                        "A new one-time link; the ones before it no longer work.",
                        user_id=g.user.id)
    db.commit()
    return _link_page(person.email, token, link, renewed=True)


# --- removing ---------------------------------------------------------------------------------


def _org_person(db, user_id: int) -> User | None:
    return db.scalar(select(User).where(User.id == user_id, User.org_id == g.user.org_id))


def _remove_page(person: User, form, refusal: str | None = None, status: int = 200):
    db = get_session()
    last = _count(db, g.user.org_id) <= 1
    if last and refusal is None:
        refusal = LAST_ONE.format(email=person.email, org=g.user.organization.name)
    return render_template("settings/person_remove.html", section="people", person=person,
                           form=form, refusal=refusal, myself=person.id == g.user.id), status


@bp.route("/people/<id:user_id>/remove", methods=["GET", "POST"])
@signin_required
def remove_person(user_id: int):
    db = get_session()
    person = _org_person(db, user_id)
    if person is None:
        abort(404)
    form = ConfirmForm()
    if request.method == "GET":
        return _remove_page(person, form)
    if not form.validate():
        abort(400)
    begin_write(db)
    org = _lock_organization(db, g.user.org_id)
    person = _org_person(db, user_id)
    if person is None:  # removed meanwhile, by someone else
        db.rollback()
        return redirect(url_for("settings.people"), 303)
    if _count(db, org.id) <= 1:
        db.rollback()
        return _remove_page(person, form, LAST_ONE.format(email=person.email, org=org.name),
                            409)
    myself = person.id == g.user.id
    event = audit.record_change(db, org.id, "person.removed", person.email,
                                "Removed themselves." if myself else "", user_id=g.user.id)
    # What they did stays on record under their email; the rows no longer point at them.
    db.execute(update(KeyEvent).where(KeyEvent.user_id == person.id).values(user_id=None))
    db.execute(update(OrgEvent).where(OrgEvent.user_id == person.id).values(user_id=None))
    db.execute(delete(PasswordLink).where(PasswordLink.user_id == person.id))
    sessions.end_all(db, person.id)  # signed out everywhere, at once (the cascade would too)
    db.execute(delete(User).where(User.id == person.id))
    db.commit()
    if myself:
        session.clear()
        return redirect(url_for("settings.signin", signed_out=1), 303)
    return redirect(url_for("settings.people", removed=event.id), 303)


# --- the one-time link ------------------------------------------------------------------------


def _link_problem(link: PasswordLink | None):
    state = password_links.state(link) if link is not None else None
    if state is password_links.State.USABLE:
        return None
    heading, sentence, status = LINK_PROBLEMS[state]
    return render_template("settings/password.html", heading=heading, sentence=sentence,
                           form=None, link=None), status


@bp.get("/password")
def password_link():
    """The page a one-time link opens: /settings/password#<token>. Browsers never send the
    fragment, so the token is in no request line and no access log; password-link.js puts it
    in this page's form and sends it (or, without JavaScript, the person pastes the link).
    The form goes to an address of its own, so that another link opened in the same tab
    loads this page again rather than only moving to another fragment of the one shown."""
    return render_template("settings/password_open.html")


TOKEN = re.compile(r"[A-Za-z0-9_-]{1,100}")  # what secrets.token_urlsafe makes


def _token_in(value: str) -> str:
    """The token of a one-time link pasted whole (either form of it), or the token itself."""
    value = value.strip()
    if "#" in value:
        return value.rsplit("#", 1)[1]
    if "/password/" in value:
        return value.rsplit("/password/", 1)[1]
    return value


@bp.post("/password/choose")
def choose_password():
    """The link's token in the body: first from the page the link opened (the form to choose
    a password comes back), then with the password typed twice."""
    token = request.form.get("token") or _token_in(request.form.get("link", "")[:2000])
    return _choose_password(token)


@bp.route("/password/<token>", methods=["GET", "POST"])
def set_password(token: str):
    """A link made before its token moved to the fragment (they work for LINK_DAYS): the
    token goes on to the fragment of the page links open now, and a form sent from the old
    page still works."""
    if request.method == "GET":
        if TOKEN.fullmatch(token) is None:  # not one of ours: never echoed into a header
            return _link_problem(None)
        return redirect(url_for("settings.password_link") + "#" + token, 303)
    return _choose_password(token)


def _choose_password(token: str):
    db = get_session()
    link = password_links.find(db, token)
    if (problem := _link_problem(link)) is not None:
        return problem
    form = SetPasswordForm()
    chosen = "password" in request.form  # else the link was just opened: its form
    if not chosen or not form.validate():
        return render_template("settings/password.html", form=form, link=link, token=token,
                               heading="Choose your password"), 400 if chosen else 200
    begin_write(db)
    db.expire_all()
    link = password_links.find(db, token, for_update=True)
    if (problem := _link_problem(link)) is not None:  # used meanwhile (sent twice at once)
        db.rollback()
        return problem
    person = link.user
    person.password_hash = hash_password(form.password.data)
    link.used_at = utcnow()
    audit.record_change(db, person.org_id, "person.password_set", person.email,
                        "With their one-time link.", user_id=person.id)
    # A new password ends every session of its person; they are signed in with a fresh one
    # (and whoever was signed in in this browser before is signed out).
    sessions.end_all(db, person.id)
    start_session(db, person.id)
    return redirect(url_for("settings.people", welcome=1), 303)
