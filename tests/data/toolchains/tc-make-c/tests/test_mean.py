import subprocess
from pathlib import Path

BINARY = Path("/tmp/build/mean")


def run(text):
    return subprocess.run([str(BINARY)], input=text, capture_output=True, text=True, timeout=10)


def test_it_builds():
    assert BINARY.is_file()


def test_a_whole_mean():
    assert run("4 4 4\n").stdout == "4.00\n"


def test_a_fractional_mean():
    assert run("1 2\n").stdout == "1.50\n"


def test_no_numbers():
    result = run("")
    assert result.returncode == 1 and result.stderr == "no numbers\n"
