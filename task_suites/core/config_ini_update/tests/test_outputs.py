"""Hidden tests for config_ini_update."""

import configparser
from pathlib import Path

CONFIG = Path("/home/user/app/config.ini")
EXPECTED = """\
; Service configuration for inventory-api
; Managed by hand; keep comments when editing.

[server]
host = 0.0.0.0
port = 8080
debug = false
workers = 4

[database]
host = db.internal
port = 5433
name = inventory
; pool size per worker
pool_size = 10

[replica]
host = db-replica.internal
port = 5432

[logging]
level = INFO
file = /var/log/inventory/api.log

[cache]
enabled = true
ttl = 300
"""


def _parsed():
    assert CONFIG.is_file(), f"{CONFIG} does not exist"
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(CONFIG.read_text())
    return parser


def test_database_port_changed_replica_kept():
    cfg = _parsed()
    assert cfg.get("database", "port") == "5433"
    assert cfg.get("replica", "port") == "5432"


def test_server_debug_false():
    cfg = _parsed()
    assert cfg.get("server", "debug") == "false"
    assert cfg.get("server", "port") == "8080"


def test_logging_level_info():
    assert _parsed().get("logging", "level") == "INFO"


def test_cache_section_added_last():
    cfg = _parsed()
    assert cfg.sections()[-1] == "cache"
    assert dict(cfg.items("cache")) == {"enabled": "true", "ttl": "300"}


def test_exact_file():
    assert CONFIG.read_text() == EXPECTED
