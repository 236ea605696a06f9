"""``--chown`` and ``--chmod``: owners looked up in the image's passwd and group text, octal and symbolic modes."""

from __future__ import annotations

import pytest

from context_fixtures import GROUP, PASSWD
from pytest_termrl.errors import TaskFormatError
from pytest_termrl.sandbox.build.ownership import Owner, SymbolicMode, parse_chmod, parse_chown


def test_chown_by_name_takes_the_primary_group(tmp_path):
    assert parse_chown("app", PASSWD, GROUP, "w") == Owner(1000, 1001)
    assert parse_chown("app:staff", PASSWD, GROUP, "w") == Owner(1000, 50)
    assert parse_chown(":staff", PASSWD, GROUP, "w") == Owner(0, 50)
    assert parse_chown("web:1234", PASSWD, GROUP, "w") == Owner(33, 1234)


def test_chown_by_number_gid_follows_uid(tmp_path):
    assert parse_chown("1000", "", "", "w") == Owner(1000, 1000)
    assert parse_chown("10:11", "", "", "w") == Owner(10, 11)
    assert parse_chown("55:staff", "", GROUP, "w") == Owner(55, 50)


def test_chown_names_the_image_lacks_are_errors(tmp_path):
    with pytest.raises(TaskFormatError, match="no user 'ghost'") as err:
        parse_chown("ghost", PASSWD, GROUP, "Dockerfile:9")
    assert err.value.path == "Dockerfile:9" and err.value.field == "--chown"
    with pytest.raises(TaskFormatError, match="no group 'nogroup'"):
        parse_chown("app:nogroup", PASSWD, GROUP, "Dockerfile:9")
    with pytest.raises(TaskFormatError, match="empty"):
        parse_chown("", PASSWD, GROUP, "Dockerfile:9")


def test_parse_chmod_octal_and_symbolic(tmp_path):
    assert parse_chmod("755", "w") == 0o755
    assert parse_chmod("0644", "w") == 0o644
    assert parse_chmod("4755", "w") == 0o4755
    assert parse_chmod("u=rwX,go=rX", "w") == SymbolicMode("u=rwX,go=rX")
    assert isinstance(parse_chmod("+x", "w"), SymbolicMode)
    for bad in ("", "9", "0x1ff", "rwxr-xr-x", "u+q", "17777", "-1"):
        with pytest.raises(TaskFormatError) as err:
            parse_chmod(bad, "Dockerfile:4")
        assert err.value.path == "Dockerfile:4" and err.value.field == "--chmod"


def test_symbolic_modes_follow_chmod(tmp_path):
    assert SymbolicMode("u=rwX,go=rX").apply(0o700, True) == 0o755
    assert SymbolicMode("u=rwX,go=rX").apply(0o600, False) == 0o644
    assert SymbolicMode("u=rwX,go=rX").apply(0o700, False) == 0o755
    assert SymbolicMode("+x").apply(0o644, False) == 0o755
    assert SymbolicMode("go-w").apply(0o777, False) == 0o755
    assert SymbolicMode("g=u").apply(0o640, False) == 0o660
    assert SymbolicMode("u+s").apply(0o755, False) == 0o4755
