import sys

sys.path.insert(0, "/app")

import wordcount  # noqa: E402  (the agent's module)


def test_counts_words():
    assert wordcount.count("one two  three\nfour") == 4


def test_empty_text_has_no_words():
    assert wordcount.count("") == 0
