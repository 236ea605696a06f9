"""One registry idiom: a lazy table from name to module and attribute, and every table built with it."""

from __future__ import annotations

import sys
import textwrap

import pytest

from pytest_termrl.registry import Entry, MissingExtra, Registry, UnknownName

# -- the idiom ----------------------------------------------------------------------------


@pytest.fixture
def tmp_module(tmp_path, monkeypatch):
    """Write ``name``.py with ``source`` on a fresh sys.path entry; forgotten again after the test."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written: list[str] = []

    def write(name: str, source: str) -> str:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


def test_a_module_is_not_imported_until_its_name_is_asked_for(tmp_module):
    name = tmp_module("termrl_lazy_entry", "THING = object()\n")
    table = Registry("thing", {"lazy": Entry(name, "THING")})
    assert "lazy" in table and table.names() == ["lazy"] and len(table) == 1
    assert name not in sys.modules
    thing = table.get("lazy")
    assert name in sys.modules and thing is sys.modules[name].THING
    assert table["lazy"] is thing


def test_an_unknown_name_lists_the_known_ones_and_is_a_key_error():
    table = Registry("widget", {"b": Entry("json", "dumps"), "a": Entry("json", "loads")})
    with pytest.raises(UnknownName) as raised:
        table.get("c")
    assert str(raised.value) == "unknown widget 'c'; known: a, b"
    with pytest.raises(KeyError, match="unknown widget 'c'; known: a, b"):
        table["c"]
    assert table.get("c", None) is None and "c" not in table and None not in table


def test_a_missing_package_of_an_extra_names_the_pip_install_line(tmp_module):
    name = tmp_module("termrl_needs_extra", "import termrl_package_that_is_not_installed\nTHING = 1\n")
    table = Registry("thing", {"fancy": Entry(name, "THING", extra="fancy")})
    with pytest.raises(MissingExtra) as raised:
        table.get("fancy")
    message = str(raised.value)
    assert "pip install 'pytest-termrl[fancy]'" in message and "termrl_package_that_is_not_installed" in message
    assert isinstance(raised.value, ImportError)


def test_a_missing_package_without_an_extra_is_a_plain_import_error(tmp_module):
    name = tmp_module("termrl_broken_entry", "import termrl_package_that_is_not_installed\n")
    table = Registry("thing", {"broken": Entry(name, "THING")})
    with pytest.raises(ImportError) as raised:
        table.get("broken")
    assert not isinstance(raised.value, MissingExtra)


def test_register_adds_a_third_party_object_and_aliases_resolve():
    table: Registry[object] = Registry("thing", {"json": Entry("json", "dumps")}, {"old": "json"})
    mine = object()
    table.register("mine", mine)
    assert table.get("mine") is mine and table.names() == ["json", "mine"]
    assert table.resolve("old") == "json" and table["old"] is table["json"] and "old" in table


def test_it_reads_as_a_mapping_in_the_order_written():
    table = Registry("thing", {"z": Entry("json", "dumps"), "a": Entry("json", "loads")})
    import json

    assert list(table) == ["z", "a"] and table.names() == ["a", "z"]
    assert dict(table.items()) == {"z": json.dumps, "a": json.loads}
    assert list(table.values()) == [json.dumps, json.loads]


def test_an_entry_of_several_attributes_is_made_into_one_object():
    table = Registry("pair", {"json": Entry("json", ("dumps", "loads"))}, make=lambda a, b: (b, a))
    import json

    assert table["json"] == (json.loads, json.dumps)


# -- the tables ---------------------------------------------------------------------------


def test_the_agents_table_names_every_agent_openai_included():
    from pytest_termrl.agents import AGENTS, agent_names, make_builtin_agent, needs_model
    from pytest_termrl.agents.builtin import NoopAgent, ReferenceAgent

    assert agent_names() == ["mini-swe-agent", "noop", "openai", "recovery", "reference", "replay", "script"]
    assert [n for n in agent_names() if needs_model(n)] == ["mini-swe-agent", "openai"]
    assert isinstance(make_builtin_agent("noop"), NoopAgent)
    assert isinstance(make_builtin_agent("oracle"), ReferenceAgent) and needs_model("oracle") is False
    with pytest.raises(KeyError, match="unknown agent 'orcale'; known: mini-swe-agent, noop, openai, recovery, reference, replay, script"):
        make_builtin_agent("orcale")
    with pytest.raises(ValueError, match="played by a model"):
        make_builtin_agent("openai")
    assert AGENTS.resolve("oracle") == "reference"


def test_a_registered_agent_factory_is_made_by_name(monkeypatch):
    from pytest_termrl.agents import AGENTS, agent_names, make_builtin_agent, needs_model, register_agent
    from pytest_termrl.agents.builtin import NoopAgent

    monkeypatch.setattr(AGENTS, "_entries", dict(AGENTS._entries))  # the registration ends with the test
    register_agent("termrl-test-noop", lambda: NoopAgent())
    assert "termrl-test-noop" in agent_names() and not needs_model("termrl-test-noop")
    assert isinstance(make_builtin_agent("termrl-test-noop"), NoopAgent)


def test_the_backends_table_names_bwrap_and_docker():
    from pytest_termrl.sandbox.base import BACKENDS, backend_names

    assert backend_names() == ["bwrap", "docker"] and list(BACKENDS) == ["bwrap", "docker"]
    with pytest.raises(KeyError, match="unknown sandbox backend 'bwarp'; known: bwrap, docker"):
        BACKENDS.get("bwarp")


def test_the_fault_families_table_one_module_each_in_a_fixed_order():
    from pytest_termrl.faults import ALIASES, CLEAN, FAMILIES, FaultFamily, family

    order = ["perm_denied", "moved_input", "blocking_fifo", "readonly_output", "unsearchable_dir"]
    assert list(FAMILIES) == order and ALIASES["mix"] == order and CLEAN not in FAMILIES
    for name, fam in FAMILIES.items():
        assert isinstance(fam, FaultFamily) and fam.name == name and family(name) is fam
        assert type(fam).__module__ == f"pytest_termrl.faults.{name}"
    assert ALIASES["heldout"] == ["blocking_fifo"]


def test_the_importers_table_tries_the_formats_in_order(tmp_path):
    from pytest_termrl.tasks.importers import FORMATS, IMPORTERS, detect_format

    assert list(IMPORTERS) == ["terminal_bench", "harbor", "native", "dockerless"] and FORMATS == tuple(IMPORTERS)
    both = tmp_path / "both"
    both.mkdir()
    (both / "task.toml").write_text("id = 'x'\n")
    assert detect_format(both) == "native"
    (both / "task.yaml").write_text("instruction: x\n")
    assert detect_format(both) == "terminal_bench"  # task.yaml is tried first
    rows = tmp_path / "rows.jsonl"
    rows.write_text("")
    assert detect_format(rows) == "dockerless" and detect_format(tmp_path / "absent") is None


def test_the_graders_and_parsers_tables():
    from pytest_termrl.verifier.parsers import PARSERS, parser_problem
    from pytest_termrl.verifier.parsers.pytest_summary import parse_pytest_summary
    from pytest_termrl.verifier.pytest_grader import failed, grade
    from pytest_termrl.verifier.verify import GRADERS, Grader

    assert list(GRADERS) == ["pytest", "script", "parsed"]
    assert GRADERS["pytest"] == Grader(grade, failed)
    assert GRADERS.get("no-such-kind", GRADERS["pytest"]) is GRADERS["pytest"]
    assert PARSERS.names() == ["pytest"] and PARSERS["pytest"] is parse_pytest_summary
    assert parser_problem(None) == "parser_name None has no parser here (known: pytest)"


def test_the_modes_table():
    from pytest_termrl.modes import DEFAULT_MODE, MODES

    assert sorted(MODES) == ["audit", "freeze", "run", "selfcheck"] and DEFAULT_MODE in MODES
