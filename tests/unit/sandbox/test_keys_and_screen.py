"""tmux key names to the bytes a terminal sends, and the screen's text: what scrolled off since the last look, then the screen."""

from __future__ import annotations

from pytest_termrl.sandbox.base import KeystrokeBatch
from pytest_termrl.sandbox.keys import describe, to_bytes
from pytest_termrl.sandbox.screen import KEEP_SCROLLED_LINES, Screen


def test_key_names_are_keys_and_anything_else_is_text():
    assert to_bytes("Enter") == b"\r" and to_bytes("C-c") == b"\x03" and to_bytes("C-d") == b"\x04"
    assert to_bytes("Escape") == b"\x1b" and to_bytes("Up") == b"\x1b[A" and to_bytes("F1") == b"\x1bOP"
    assert to_bytes("M-x") == b"\x1bx" and to_bytes("M-Up") == b"\x1b\x1b[A" and to_bytes("^[") == b"\x1b"
    assert to_bytes("ls -la\n") == b"ls -la\r", "a newline typed as text is Enter"
    assert to_bytes("Entered") == b"Entered" and to_bytes("C-cc") == b"C-cc" and to_bytes("é") == "é".encode()


def test_a_batch_reads_as_one_line():
    assert describe(["cat > f <<EOF\n", "a", "Enter", "C-d"]) == "cat > f <<EOF⏎a<Enter><C-d>"
    assert KeystrokeBatch(("vim x", "Enter", ":wq", "Enter")).text() == "vim x<Enter>:wq<Enter>"


def test_a_look_shows_what_scrolled_off_since_the_last_look_then_the_screen():
    screen = Screen(20, 3)
    screen.feed(b"one\r\ntwo\r\nthree\r\nfour\r\nfive")
    assert screen.look() == "one\ntwo\nthree\nfour\nfive"
    assert screen.look() == "three\nfour\nfive", "what scrolled off was shown once"
    screen.feed(b"\r\nsix   ")
    assert screen.look() == "three\nfour\nfive\nsix", "trailing spaces go"


def test_escape_sequences_never_reach_the_text_even_cut_between_two_feeds():
    screen = Screen(40, 4)
    screen.feed(b"\x1b]777;termrl-0123\x07\x1b[?2004h$ \x1b[3")
    screen.feed(b"1mred\x1b[0m \xe4\xb8")
    screen.feed(b"\xad done\r\n\r\n\r\n")
    assert screen.look() == "$ red 中 done"


def test_a_full_screen_program_draws_on_the_alternate_screen_and_leaves_the_shells_as_it_was():
    screen = Screen(20, 3)
    screen.feed(b"$ less f\r\n")
    screen.feed(b"\x1b[?1049h\x1b[H" + b"\r\n".join(b"page %d" % n for n in range(10)))
    assert screen.look() == "page 7\npage 8\npage 9", "the pager's lines never scroll into the history"
    screen.feed(b"\x1b[?1049l$ ")
    assert screen.look() == "$ less f\n$"


def test_a_flood_keeps_the_head_and_tail_of_what_scrolled_and_counts_the_rest():
    screen = Screen(10, 2)
    total = 3 * KEEP_SCROLLED_LINES
    screen.feed(b"".join(b"%d\r\n" % n for n in range(total)))
    lines = screen.look().splitlines()
    assert lines[0] == "0" and lines[KEEP_SCROLLED_LINES - 1] == str(KEEP_SCROLLED_LINES - 1)
    assert lines[KEEP_SCROLLED_LINES] == f"[... {total - 2 * KEEP_SCROLLED_LINES - 1} more lines scrolled past ...]"
    assert lines[-1] == str(total - 1)
