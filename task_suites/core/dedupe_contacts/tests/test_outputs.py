"""Hidden tests for dedupe_contacts."""

from pathlib import Path

OUT = Path("/home/user/out/contacts_dedup.csv")
REMOVED = Path("/home/user/out/duplicates_removed.txt")
EXPECTED = [
    "name,email,phone",
    "Alice Martin,alice.martin@example.com,+33 1 40 00 00 01",
    "Bob Stone,bob.stone@example.com,+44 20 7946 0002",
    "Carla Diaz,carla.diaz@example.org,+34 91 123 4567",
    "Deepak Rao,deepak.rao@example.in,+91 80 2222 3333",
    "Eva Lind,eva.lind@example.se,+46 8 123 456",
    "Farid Haddad,farid@example.net,+961 1 234 567",
    "Greta Holm,greta.holm@example.se,",
    "Hugo Brun,hugo.brun@example.fr,+33 4 72 00 00 00",
    "Ines Sousa,ines.sousa@example.pt,+351 21 000 0000",
    "Jonas Weber,jonas.weber@example.de,+49 30 123456",
    "Karin Berg,karin.berg@example.no,+47 22 00 00 00",
]


def _lines():
    assert OUT.is_file(), f"{OUT} does not exist"
    return OUT.read_text().splitlines()


def test_header_and_unique_emails():
    lines = _lines()
    assert lines and lines[0] == "name,email,phone"
    emails = [line.split(",")[1] for line in lines[1:]]
    assert len(emails) == len(set(emails)), "emails must be unique"
    assert sorted(emails) == sorted(line.split(",")[1] for line in EXPECTED[1:])


def test_first_occurrence_kept():
    rows = {line.split(",")[1]: line for line in _lines()[1:]}
    assert rows.get("alice.martin@example.com") == EXPECTED[1]
    assert rows.get("farid@example.net") == EXPECTED[6]
    assert rows.get("eva.lind@example.se") == EXPECTED[5]


def test_exact_file():
    assert OUT.read_text() == "\n".join(EXPECTED) + "\n"


def test_removed_count():
    assert REMOVED.is_file(), f"{REMOVED} does not exist"
    assert REMOVED.read_text() == "6\n"
