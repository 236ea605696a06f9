import subprocess
from pathlib import Path


def test_script_exists():
    assert Path("/app/total.py").is_file()


def test_prints_the_sum():
    done = subprocess.run(["python3", "/app/total.py"], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "44"


def test_input_left_as_it_was():
    assert Path("/app/numbers.txt").read_text() == "12\n-5\n\n30\n7\n"
