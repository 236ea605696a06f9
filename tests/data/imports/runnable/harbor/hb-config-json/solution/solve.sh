#!/bin/bash
python3 - <<'PY'
import configparser, json
config = configparser.ConfigParser()
config.read("/app/settings.ini")
data = {section: dict(config[section]) for section in config.sections()}
with open("/app/settings.json", "w") as handle:
    json.dump(data, handle, indent=2, sort_keys=True)
    handle.write("\n")
PY
