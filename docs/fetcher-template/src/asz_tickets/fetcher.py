"""``ticket:KEY`` sources from a ticket system's JSON API.

asz.yaml gives its options under ``fetch: {plugins: {tickets: {...}}}``::

    fetch:
      plugins:
        tickets: {url: "https://tickets.example.com/api", token_env: TICKETS_TOKEN}

The fetcher is given the source and its settings only, never the conversation. It honours the
bounds asz gives it (``settings.max_bytes``, the timeouts) and says why it failed with
:class:`~asz_core.FetchError`; asz saves the copy, its manifest and its text itself.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from typing import ClassVar

from asz_core import Fetched, FetchError, FetchSettings, SourceFetcher

KEY = re.compile(r"^[A-Z][A-Z0-9]*-[1-9][0-9]*$")


class TicketFetcher(SourceFetcher):
    name: ClassVar[str] = "tickets"
    order: ClassVar[int] = 50

    def accepts(self, source: str, settings: FetchSettings) -> bool:
        return source.startswith("ticket:") and bool(settings.options.get("url"))

    def fetch(self, source: str, settings: FetchSettings) -> Fetched:
        key = source.removeprefix("ticket:")
        if not KEY.match(key):  # a key is data: never a path part unchecked
            raise FetchError(f"{key!r} is no ticket key (such as OPS-12)")
        url = f"{settings.options['url'].rstrip('/')}/tickets/{key}"
        req = urllib.request.Request(url, headers={"Accept": "application/json"})
        token = os.environ.get(settings.options.get("token_env") or "", "")
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=settings.read_timeout) as resp:
                body = resp.read(settings.max_bytes + 1)
        except urllib.error.HTTPError as exc:
            raise FetchError(f"{url}: HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise FetchError(f"{url}: {getattr(exc, 'reason', exc)}") from None
        if len(body) > settings.max_bytes:
            raise FetchError(f"{url}: the ticket is larger than {settings.max_bytes:,} bytes")
        try:
            t = json.loads(body)
        except ValueError:
            raise FetchError(f"{url}: the answer is not JSON") from None
        text = f"# {key}: {t.get('title', '')}\n\n{t.get('description', '')}\n"
        for c in t.get("comments") or []:
            text += f"\n## {c.get('author', '?')} ({c.get('at', '?')})\n\n{c.get('body', '')}\n"
        return Fetched(text.encode()[: settings.max_bytes], f"GET {url}", content_type="text/markdown", location=url,
                       revision=str(t["version"]) if "version" in t else None, published=t.get("updated"),
                       author=t.get("reporter"))
