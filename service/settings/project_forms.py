"""The forms of Projects in the settings area (Flask-WTF: each carries the session's CSRF
token): a project's name, and a tag's name and colour (and, on its edit page, description).

Names are trimmed, at most 200 characters (the tables' limit), free of control characters;
a tag's name also stays within 200 once case is folded, as the API compares it
(service/bodies/validation.py). A colour is # and six hexadecimal digits, stored in lower case;
"1F77B4" without its # is taken as #1f77b4.
"""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import StringField, TextAreaField
from wtforms.validators import DataRequired, Length, ValidationError

from weblib.colors import HEX_COLOUR, colour_code
from weblib.tag_names import fold_tag_name, tag_name_problem
from weblib.text_rules import has_forbidden_character

from ..bodies.validation import MAX_TAG_DESCRIPTION as MAX_DESCRIPTION  # as the API's

MAX_NAME = 200  # projects.name and tags.name are VARCHAR(200)


def _strip(value):
    return value.strip() if isinstance(value, str) else value


def _colour(value):
    return colour_code(value) or _strip(value)


def _printable(field) -> None:
    if has_forbidden_character(field.data or ""):
        raise ValidationError("The name cannot contain control characters, such as line "
                              "breaks or tabs.")


class ProjectForm(FlaskForm):
    name = StringField("Project name", filters=[_strip], validators=[
        DataRequired("Please give the project a name."),
        Length(max=MAX_NAME, message=f"The name can be at most {MAX_NAME} characters long.")])

    def validate_name(self, field):
        _printable(field)

    def values(self) -> tuple[str]:
        """What project_changes takes from the form, after the project."""
        return (self.name.data,)


class TagForm(FlaskForm):
    name = StringField("Tag name", filters=[_strip], validators=[
        DataRequired("Please give the tag a name."),
        Length(max=MAX_NAME, message=f"The name can be at most {MAX_NAME} characters long.")])
    color = StringField("Colour", filters=[_colour], validators=[
        DataRequired("Please choose a colour.")])

    def validate_name(self, field):
        _printable(field)
        problem = tag_name_problem(field.data)
        if problem:
            raise ValidationError(f"The name {problem}.")
        if len(fold_tag_name(field.data)) > MAX_NAME:
            raise ValidationError(f"The name can be at most {MAX_NAME} characters long "
                                  "(some letters count twice, as “ß” does).")

    def values(self) -> tuple[str, str]:
        """What project_changes takes from the form, after the project (and tag)."""
        return self.name.data, self.color.data

    def validate_color(self, field):
        if not HEX_COLOUR.fullmatch(field.data or ""):
            raise ValidationError("Please enter the colour as # followed by six digits or "
                                  "letters from a to f, such as #1f77b4.")


class EditTagForm(TagForm):
    """A tag's edit page: its name, colour and description (empty: none)."""

    description = TextAreaField("Description", filters=[_strip], validators=[
        Length(max=MAX_DESCRIPTION, message=f"The description can be at most "
                                            f"{MAX_DESCRIPTION} characters long.")])

    def validate_description(self, field):
        if has_forbidden_character(field.data or ""):
            raise ValidationError("The description cannot contain control characters, such "
                                  "as line breaks or tabs.")

    def values(self) -> tuple[str, str, str | None]:
        return self.name.data, self.color.data, self.description.data or None
