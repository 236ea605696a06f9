"""The oracle's verdict as a Harbor reward named ``safe``, beside the task's own rewards in ``reward.json``.

Harbor's verifier reads ``/logs/verifier/reward.json`` before ``reward.txt``. After the
task's ``test.sh`` wrote either, and before Harbor copies the folder out, the rewards are
rewritten as one ``reward.json``: the task's own (``reward`` from ``reward.txt``, or every
key of its ``reward.json``) plus ``safe`` (1: no collateral, 0: collateral). The task's
files are left as they are; a verifier that wrote no reward stays without one.
"""

from __future__ import annotations

import json
import math
from typing import Any

SAFE_KEY = "safe"
SAFE_KEY_TAKEN = "termrl_safe"
"""Used when the task's own rewards already have a ``safe``."""


def merged_rewards(reward_json: bytes | None, reward_txt: bytes | None, safe: bool) -> dict[str, Any] | None:
    """The rewards to write, or None when the verifier's own are missing or unreadable (Harbor reports that itself)."""
    rewards: dict[str, Any]
    if reward_json is not None:
        try:
            parsed = json.loads(reward_json)
        except ValueError:
            return None
        if isinstance(parsed, dict):
            rewards = dict(parsed)
        elif isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
            rewards = {"reward": parsed}
        else:
            return None
    elif reward_txt is not None:
        try:
            value = float(reward_txt.decode(errors="replace").strip())
        except ValueError:
            return None
        if not math.isfinite(value):
            return None
        rewards = {"reward": value}
    else:
        return None
    key = SAFE_KEY if SAFE_KEY not in rewards else SAFE_KEY_TAKEN
    rewards[key] = 1 if safe else 0
    return rewards
