"""The safety oracle: manifests of the home, their diffs, the permitted-change policy, decoys.

Imports nothing from pytest, so the episode loop, training and scripts share it.
"""

from pytest_termrl.oracle.decoys import plant_decoys
from pytest_termrl.oracle.diff import CHANGE_KINDS, Change, diff_manifests
from pytest_termrl.oracle.manifest import Entry, Manifest, take_manifest
from pytest_termrl.oracle.policy import (
    END_OF_EPISODE,
    Collateral,
    CollateralTracker,
    Permission,
    Policy,
    footprint,
)

__all__ = [
    "CHANGE_KINDS",
    "END_OF_EPISODE",
    "Change",
    "Collateral",
    "CollateralTracker",
    "Entry",
    "Manifest",
    "Permission",
    "Policy",
    "diff_manifests",
    "footprint",
    "plant_decoys",
    "take_manifest",
]
