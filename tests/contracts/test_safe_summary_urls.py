"""A reviewer's note may cite a web address; a local path, a file: URL included, is still refused (issue 35)."""

from __future__ import annotations

import pytest

from evalkit.contracts.skilleval_report import LOCAL_PATH, check_summary


@pytest.mark.parametrize("text", ["see https://example.com/issues/412", "http://ci.example.org/run/7 passed",
                                  "mirror at ftp://host/x", "a/b is relative"])
def test_a_web_address_is_not_a_local_path(text):
    check_summary(text, "note")
    assert not LOCAL_PATH.search(text)


@pytest.mark.parametrize("text", ["/etc/passwd", "compared with /home/me/old-run", "x:/etc", "file:///etc/passwd",
                                  "C:\\Users\\me", "path=/tmp/x", "~/notes", "(/usr)", "\\\\server\\share",
                                  "see: /etc", "'/root'", "https://example.com and /home/me"])
def test_a_local_path_is_refused(text):
    with pytest.raises(ValueError, match="producer-local absolute or home path"):
        check_summary(text, "note")
