"""Spreading a run's model episodes over several OpenAI-compatible endpoints, and dropping dead ones.

Each process (an xdist worker, or the one process of a run without xdist) holds its own
pool. Episodes go round-robin over the endpoints still in rotation, each worker starting at
its own offset (worker N at endpoint N mod count), so that at any moment the workers talk to
different servers and over a run every server gets about the same share. An endpoint that
stopped answering (connection refused, no reply, server errors until the retries ran out)
fails its episode as a server error, as any dead server does, and is then taken out of this
process's rotation; with ``--termrl-resume`` the failed episode is played again. When every
endpoint is out, episodes still go to them (and fail, each with its reason), so that no count
is silently smaller.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def read_endpoint_list(values: list[str], read_file=None) -> list[str]:
    """The endpoints named by ``--termrl-base-url`` values: a URL, or ``@FILE`` with one URL per line.

    Blank lines and ``#`` comments in a file are skipped; duplicates are dropped (first kept).
    Raises ValueError naming the value or ``file:line`` that is not an http(s) URL.
    """
    urls: list[str] = []
    for value in values:
        if value.startswith("@"):
            path = value[1:]
            try:
                text = read_file(path) if read_file else open(path, encoding="utf-8").read()
            except (OSError, UnicodeDecodeError) as exc:
                raise ValueError(f"--termrl-base-url {value}: cannot read the list of endpoints ({exc})") from None
            entries = [(f"{path}:{n}", line.split("#", 1)[0].strip()) for n, line in enumerate(text.splitlines(), start=1)]
            entries = [(where, url) for where, url in entries if url]
            if not entries:
                raise ValueError(f"--termrl-base-url {value}: the file lists no endpoint")
        else:
            entries = [("--termrl-base-url", value.strip())]
        for where, url in entries:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"{where}: expected an http:// or https:// URL of an OpenAI-compatible endpoint, got {url!r}")
            if url not in urls:
                urls.append(url)
    return urls


@dataclass
class EndpointPool:
    urls: list[str]
    offset: int = 0
    """Where this process starts in the rotation (its xdist worker number)."""
    down: dict[str, str] = field(default_factory=dict)
    """Endpoints taken out of rotation, with the error that took them out."""
    served: dict[str, int] = field(default_factory=dict)
    _turn: int = 0

    def pick(self) -> str:
        """The endpoint for the next episode."""
        if not self.urls:
            raise ValueError("no model endpoint to pick from")
        live = [u for u in self.urls if u not in self.down] or list(self.urls)
        url = live[(self.offset + self._turn) % len(live)]
        self._turn += 1
        self.served[url] = self.served.get(url, 0) + 1
        return url

    def mark_down(self, url: str, reason: str) -> bool:
        """Take ``url`` out of rotation; True the first time (the caller warns once)."""
        if url in self.down or url not in self.urls:
            return False
        self.down[url] = reason
        return True
