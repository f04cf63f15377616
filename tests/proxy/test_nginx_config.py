"""deploy/nginx.conf agrees with the apps behind it: client addresses reach the sign-in
throttle through X-Forwarded-For (TAGDESK_TRUSTED_PROXIES=1), and each path has the body
limit of the app that answers it — 1 MiB for the API (refused in the API's JSON) and the
settings area, the size of a large CSV file for the settings area's import.
"""

from __future__ import annotations

import pytest
import requests

from service.config import MAX_BODY_BYTES
from tests.support.security import Visitor

pytestmark = pytest.mark.nginx

TOO_LARGE = {"statusCode": 413, "message": "Request body is larger than 1 MiB.",
             "error": "Payload Too Large"}
ATTEMPTS = 5  # the settings area's sign-in limit a client address (5/minute)


def test_each_client_address_has_its_own_sign_in_throttle(behind_nginx):
    # One worker: without Redis each worker counts for itself.
    _dashboard, nginx = behind_nginx(workers=1)
    first = Visitor(nginx.url, "127.0.0.2")
    answers = [first.settings_sign_in(f"nobody{n}@example.com").status_code
               for n in range(ATTEMPTS + 1)]
    assert answers == [401] * ATTEMPTS + [429], nginx.log()
    # Another client, through the same nginx (the apps see 127.0.0.1 for both): a fresh count.
    assert Visitor(nginx.url, "127.0.0.3").settings_sign_in("someone@example.com") \
        .status_code == 401
    # An X-Forwarded-For of the client's own making does not make it someone else.
    first.http.headers["X-Forwarded-For"] = "203.0.113.9"
    assert first.settings_sign_in("again@example.com").status_code == 429


def test_body_limits_follow_the_apps(embedded_behind_nginx, world):
    _dashboard, nginx = embedded_behind_nginx
    json = {"content-type": "application/json", "x-api-key": world.key,
            "x-project-id": world.project_id}
    exactly = b'{"query":"x"}'.ljust(MAX_BODY_BYTES)
    fits = requests.post(nginx.url + "/api/queries/list", data=exactly, headers=json, timeout=30)
    assert fits.status_code == 200, fits.text[:300]
    over = requests.post(nginx.url + "/api/queries/list", data=exactly + b" ", headers=json,
                         timeout=30)
    assert (over.status_code, over.json()) == (413, TOO_LARGE)
    assert over.headers["Content-Type"] == "application/json"

    form = {"content-type": "text/csv"}
    two_mebibytes = b"query,language,country\n" + b"a,en,US\n" * (2 * MAX_BODY_BYTES // 8)
    signin = requests.post(nginx.url + "/settings/signin", data=two_mebibytes, headers=form,
                           timeout=30)
    assert signin.status_code == 413
    # The import's path lets a large file through to the service, whose own page refuses it
    # here (a file that large is taken from a signed-in administrator alone).
    upload = requests.post(f"{nginx.url}/settings/projects/{world.project_id}/imports",
                           data=two_mebibytes, headers=form, timeout=30, allow_redirects=False)
    assert "Tagdesk" in upload.text and "nginx" not in upload.text, upload.text[:300]
