"""Hidden tests for batch_rename_photos."""

from pathlib import Path

PHOTOS = Path("/home/user/photos")
RENAMES = [
    ("IMG_0001.jpg", "2023-07-14_lake-bled_0001.jpg"),
    ("IMG_0002.jpg", "2023-07-14_lake-bled_0002.jpg"),
    ("IMG_0003.jpg", "2023-07-15_vintgar-gorge_0003.jpg"),
    ("IMG_0005.jpg", "2023-07-16_ljubljana-old-town_0005.jpg"),
    ("IMG_0006.jpg", "2023-07-16_ljubljana-castle_0006.jpg"),
    ("IMG_0007.jpg", "2023-07-18_piran_0007.jpg"),
    ("IMG_0009.jpg", "2023-07-19_skocjan-caves_0009.jpg"),
]
UNLISTED = ["IMG_0004.jpg", "IMG_0008.jpg"]


def _content(number):
    return f"JPEG placeholder for IMG_{number}\n"


def test_renamed_files_exist_with_content():
    for old, new in RENAMES:
        path = PHOTOS / new
        assert path.is_file(), f"missing {new}"
        assert path.read_text() == _content(old[4:8]), f"{new} does not hold the content of {old}"


def test_old_names_gone():
    left = [old for old, _new in RENAMES if (PHOTOS / old).exists()]
    assert not left, f"still present: {left}"


def test_photo_set_exact_and_unlisted_untouched():
    names = sorted(p.name for p in PHOTOS.iterdir() if p.name.endswith(".jpg"))
    assert names == sorted([new for _old, new in RENAMES] + UNLISTED)
    for name in UNLISTED:
        assert (PHOTOS / name).read_text() == _content(name[4:8]), f"{name} was modified"


def test_rename_log():
    log = PHOTOS / "rename.log"
    assert log.is_file(), f"{log} does not exist"
    assert log.read_text() == "".join(f"{old} -> {new}\n" for old, new in RENAMES)
