import importlib.util


def _slugify():
    spec = importlib.util.spec_from_file_location("slug_under_test", "/tmp/slug_under_test.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.slugify


def test_words():
    assert _slugify()("Hello, World!") == "hello-world"


def test_runs_and_ends():
    assert _slugify()("--A  b__c--") == "a-b-c"
