"""Hidden tests for log_latency_stats."""

import json
from pathlib import Path

REPORT = Path("/home/user/reports/latency.json")
EXPECTED = {
    "/api/login": {"count": 21, "avg_ms": 142.5, "p95_ms": 240, "max_ms": 244},
    "/api/orders": {"count": 29, "avg_ms": 257.1, "p95_ms": 378, "max_ms": 380},
    "/api/search": {"count": 34, "avg_ms": 509.5, "p95_ms": 852, "max_ms": 858},
    "/api/users": {"count": 38, "avg_ms": 110.2, "p95_ms": 172, "max_ms": 173},
    "/health": {"count": 25, "avg_ms": 5.8, "p95_ms": 9, "max_ms": 9},
}


def _load():
    assert REPORT.is_file(), f"{REPORT} does not exist"
    data = json.loads(REPORT.read_text())
    assert isinstance(data, dict), "the report must be a JSON object"
    return data


def test_endpoints():
    data = _load()
    assert sorted(data) == sorted(EXPECTED), "endpoints must be the paths without query strings, 5xx-only endpoints left out"
    for endpoint, value in data.items():
        assert isinstance(value, dict) and sorted(value) == ["avg_ms", "count", "max_ms", "p95_ms"], endpoint


def test_counts():
    data = _load()
    assert {k: v.get("count") for k, v in data.items()} == {k: v["count"] for k, v in EXPECTED.items()}


def test_averages():
    data = _load()
    for endpoint, want in EXPECTED.items():
        got = data.get(endpoint, {}).get("avg_ms")
        assert isinstance(got, (int, float)) and not isinstance(got, bool), f"{endpoint}: avg_ms must be a number"
        assert abs(got - want["avg_ms"]) < 1e-9, f"{endpoint}: avg_ms {got} != {want['avg_ms']}"


def test_p95():
    data = _load()
    got = {k: v.get("p95_ms") for k, v in data.items()}
    assert got == {k: v["p95_ms"] for k, v in EXPECTED.items()}


def test_max():
    data = _load()
    got = {k: v.get("max_ms") for k, v in data.items()}
    assert got == {k: v["max_ms"] for k, v in EXPECTED.items()}
