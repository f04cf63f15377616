"""The settings area's forms (Flask-WTF: each carries the session's CSRF token)."""

from __future__ import annotations

import re

from flask_wtf import FlaskForm
from wtforms import HiddenField, PasswordField, SelectField, StringField
from wtforms.validators import DataRequired, Length, ValidationError

from .accounts import MAX_EMAIL, MAX_PASSWORD

MAX_KEY_NAME = 200
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _strip(value):
    return value.strip() if isinstance(value, str) else value


class SignInForm(FlaskForm):
    email = StringField("Email", filters=[_strip], validators=[
        DataRequired("Please enter your email address."),
        Length(max=MAX_EMAIL, message="That is not an email address: it is too long.")])
    password = PasswordField("Password", validators=[
        DataRequired("Please enter your password."),
        Length(max=MAX_PASSWORD, message="That password is too long.")])


class GenerateKeyForm(FlaskForm):
    name = StringField("Name", filters=[_strip], validators=[
        DataRequired("Please give the key a name, so that you can recognise it later."),
        Length(max=MAX_KEY_NAME,
               message=f"The name can be at most {MAX_KEY_NAME} characters long.")])
    project = SelectField("Project", choices=[], validate_choice=False)
    # One-time token of this form: submitting the same form twice (a reload) makes one key.
    form_token = HiddenField(validators=[DataRequired(), Length(min=16, max=64)])

    def validate_name(self, field):
        if CONTROL.search(field.data or ""):
            raise ValidationError("The name cannot contain control characters.")

    def validate_project(self, field):
        allowed = {value for value, _ in self.project.choices}
        if (field.data or "") not in allowed:
            raise ValidationError("Choose one of your organization's projects, or all projects.")


class ConfirmForm(FlaskForm):
    """A button and the CSRF token (revoking, signing out)."""
