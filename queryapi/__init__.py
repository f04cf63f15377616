"""queryapi: the HTTP client of the Query & Tag API (see docs/queryapi-interface.md).

It knows only HTTP and the API reference; it imports nothing from `service/` or the dashboard.

    client.py     Client: the four endpoints, paging, set-tags batching; the extensions
                  (create_tag, facets, saved views, rules, edit_tags) and capabilities()
                  (which ones does this deployment offer?)
    transport.py  one call on the wire: timeouts, waiting and retrying per mode, errors
    retries.py    Mode, and the urllib3 Retry policy of each mode
    pacing.py     BACKGROUND mode's pacing from the X-RateLimit-* headers
    records.py    typed records and tolerant parsing
    errors.py     the error hierarchy
    keys.py       the key: masked everywhere, sent only in its header
    stats.py      counters of requests, 429s, 503s and seconds slept
"""

from .client import Client
from .errors import (
    ApiError,
    AuthError,
    Conflict,
    InvalidRequest,
    NotFound,
    RateLimited,
    TransportError,
    Unavailable,
)
from .keys import mask
from .records import (
    NUMBER_NAMES,
    Capabilities,
    CommonWords,
    Facets,
    FrozenMapping,
    ImportRecord,
    Page,
    Project,
    ProjectPage,
    Query,
    QueryFilters,
    QueryPage,
    Rule,
    RuleApplied,
    RulePreview,
    RuleUnapplied,
    SavedView,
    Suggestion,
    SuggestionsAccepted,
    SuggestionStatus,
    Tag,
    TagAssignment,
    TagEdit,
    TagMerge,
    TagPage,
    TagSource,
    TagUnmerge,
)
from .retries import Mode
from .stats import ClientStats

__all__ = [
    "ApiError",
    "AuthError",
    "Capabilities",
    "Client",
    "ClientStats",
    "CommonWords",
    "Conflict",
    "Facets",
    "FrozenMapping",
    "ImportRecord",
    "InvalidRequest",
    "Mode",
    "NUMBER_NAMES",
    "NotFound",
    "Page",
    "Project",
    "ProjectPage",
    "Query",
    "QueryFilters",
    "QueryPage",
    "RateLimited",
    "Rule",
    "RuleApplied",
    "RulePreview",
    "RuleUnapplied",
    "SavedView",
    "Suggestion",
    "SuggestionStatus",
    "SuggestionsAccepted",
    "Tag",
    "TagAssignment",
    "TagEdit",
    "TagMerge",
    "TagSource",
    "TagPage",
    "TagUnmerge",
    "TransportError",
    "Unavailable",
    "mask",
]
