python3 - <<'PY'
import csv
import os
import re

base = "/home/user/photos"
log = []
with open(os.path.join(base, "index.csv"), newline="") as fh:
    for row in csv.DictReader(fh):
        old = row["file"]
        number = re.fullmatch(r"IMG_(\d{4})\.jpg", old).group(1)
        slug = re.sub(r"[^a-z0-9]+", "-", row["place"].lower()).strip("-")
        new = f"{row['date']}_{slug}_{number}.jpg"
        os.rename(os.path.join(base, old), os.path.join(base, new))
        log.append(f"{old} -> {new}\n")
with open(os.path.join(base, "rename.log"), "w") as fh:
    fh.writelines(log)
PY
