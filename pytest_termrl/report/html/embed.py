"""Data packed into the page: JSON that cannot close its script tag, and gzip + base64 blobs opened on demand."""

from __future__ import annotations

import base64
import gzip
import json

_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(value) -> str:
    """JSON for inside a <script> element: no '</script>', '<!--' or line separator can end it early."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    for char, escaped in _UNSAFE.items():
        text = text.replace(char, escaped)
    return text


def packed(value) -> str:
    """gzip-compressed JSON in base64: what the browser's DecompressionStream('gzip') opens."""
    raw = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def unpacked(text: str):
    """The inverse of :func:`packed` (for tests and tools reading a report back)."""
    return json.loads(gzip.decompress(base64.b64decode(text)).decode("utf-8"))
