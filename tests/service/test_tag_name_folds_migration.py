"""Migration 0025: every tag's folded name is computed again as names read (weblib.tag_names),
tags that now read as another keep their own fold (nothing merged, nothing lost), and the way
back restores the case-folded names."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from tests.service.migrating import P1, P2, engine_of_its_own, migrate, migrated_with_rows

TAGS = [
    (P1, "Brand"),            # the fold "brand" is already this tag's
    (P1, "brand\u200b"),      # reads as "Brand": keeps its own fold
    (P1, "Cafe\u0301"),       # decomposed: takes the composed fold
    (P1, "\uff33ale"),        # full-width S: takes "sale"
    (P2, "x\u200by"),         # alone in its project: takes "xy"
    (P2, "Straße"),           # unchanged
]
FOLDS = "SELECT name, name_folded FROM tags ORDER BY id"


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_folds_are_computed_again_and_look_alikes_keep_their_own(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_tag_folds_") as engine:
        migrated_with_rows(engine, "0024", [("shoes", "en", "US")])
        with engine.begin() as connection:
            for project, name in TAGS:
                connection.execute(text(
                    "INSERT INTO tags (project_id, name, name_folded, color) "
                    "VALUES (:project, :name, :folded, '#123456')"),
                    {"project": project, "name": name, "folded": name.casefold()})
        migrate(engine, "0025")
        with engine.connect() as connection:
            assert connection.execute(text(FOLDS)).all() == [
                ("Brand", "brand"), ("brand\u200b", "brand\u200b"), ("Cafe\u0301", "café"),
                ("\uff33ale", "sale"), ("x\u200by", "xy"), ("Straße", "strasse")]
        migrate(engine, "0024", down=True)
        with engine.connect() as connection:
            assert connection.execute(text(FOLDS)).all() == [
                (name, name.casefold()) for _project, name in TAGS]
