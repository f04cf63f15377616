"""The settings area's forms (Flask-WTF: each carries the session's CSRF token)."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import HiddenField, PasswordField, SelectField, StringField
from wtforms.validators import DataRequired, Length, ValidationError

from weblib.text_rules import has_forbidden_character

from ..org.accounts import MAX_EMAIL, MAX_PASSWORD, fold_email, password_problem, valid_email

MAX_KEY_NAME = 200


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
        if has_forbidden_character(field.data or ""):
            raise ValidationError("The name cannot contain control characters.")

    def validate_project(self, field):
        allowed = {value for value, _ in self.project.choices}
        if (field.data or "") not in allowed:
            raise ValidationError("Choose one of your organization's projects, or all projects.")


class ConfirmForm(FlaskForm):
    """A button and the CSRF token (revoking, signing out)."""


# --- people ---------------------------------------------------------------------------------

LINK = "link"
TYPED = "password"
METHODS = [(LINK, "A one-time link: they choose their own password"),
           (TYPED, "A password you type now")]


def _same_password(form, field):
    if (form.password.data or "") != (field.data or ""):
        raise ValidationError("The two passwords are not the same. Please type the same "
                              "password twice.")


class AddPersonForm(FlaskForm):
    email = StringField("Email", filters=[_strip], validators=[
        DataRequired("Please enter the email address of the new administrator."),
        Length(max=MAX_EMAIL, message="That is not an email address: it is too long.")])
    # How they get their password: one of METHODS (radio buttons).
    method = StringField("Their password", default=LINK)
    password = PasswordField("Password", validators=[
        Length(max=MAX_PASSWORD, message="That password is too long.")])
    repeat = PasswordField("Repeat password")

    def validate_email(self, field):
        if not valid_email(fold_email(field.data or "")):
            raise ValidationError("That is not an email address. Please check it.")

    def validate_method(self, field):
        if field.data not in dict(METHODS):
            raise ValidationError("Choose how the new administrator gets their password.")

    def validate_password(self, field):
        if self.method.data != TYPED:
            return
        problem = password_problem(field.data or "")
        if problem:
            raise ValidationError(problem)

    def validate_repeat(self, field):
        if self.method.data == TYPED:
            _same_password(self, field)


class SetPasswordForm(FlaskForm):
    password = PasswordField("Password", validators=[
        Length(max=MAX_PASSWORD, message="That password is too long.")])
    repeat = PasswordField("Repeat password", validators=[_same_password])

    def validate_password(self, field):
        problem = password_problem(field.data or "")
        if problem:
            raise ValidationError(problem)
