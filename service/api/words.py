"""POST /api/queries/words (an extension): the words and two-word phrases most of a view's
queries contain, with exact counts (service/engine/common_words.py)."""

from __future__ import annotations

from pydantic import Field
from sqlalchemy.orm import Session

from ..bodies.validation import Int, QueryFilterBody
from ..engine import common_words, listing
from ..engine.held import Held

DEFAULT_LIMIT = 20
MAX_LIMIT = 50


class WordsBody(QueryFilterBody):
    """The filter of queries/list, and how many words and phrases to give of each."""

    limit: Int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)


def words(session: Session, project_id: str, body: WordsBody, store: Held) -> dict:
    """{"totalRecords", "words": [{"text", "count"}], "phrases": [{"text", "count"}]}."""
    tags = listing.project_tags(session, project_id)
    wanted = body.to_filter(tags)
    counting = listing.counter(session, project_id, store, tags)
    total, found, phrases = common_words.common_words(counting, wanted, body.limit)
    return {"totalRecords": total,
            "words": [{"text": item.text, "count": item.count} for item in found],
            "phrases": [{"text": item.text, "count": item.count} for item in phrases]}
