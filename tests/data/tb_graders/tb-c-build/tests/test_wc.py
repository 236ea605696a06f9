import subprocess
from pathlib import Path

BINARY = Path("/tmp/build/wc")


def count(text):
    return subprocess.run([str(BINARY)], input=text, capture_output=True, text=True, timeout=10).stdout.strip()


def test_it_builds():
    assert BINARY.is_file()


def test_empty_input():
    assert count("") == "0 0"


def test_words_are_counted_once():
    assert count("one two  three\nfour\n") == "2 4"
