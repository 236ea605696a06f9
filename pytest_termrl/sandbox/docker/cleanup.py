"""What killed runs left on a Docker engine: their labelled containers, volumes and committed images, found and removed.

A run labels all it creates with ``termrl=1``, ``termrl.host`` and ``termrl.pid``; what a
process of this host made and that process is dead is a leftover. Other hosts' runs, and
live ones, are never touched.
"""

from __future__ import annotations

from ..hostfs import pid_alive
from .layout import LABEL


def remove_dead_runs(api, api_error: type[Exception], host: str) -> list[str]:
    """Remove the containers and volumes of this host's dead runs; return what was removed."""
    removed = []
    try:
        containers = api.containers(all=True, filters={"label": f"{LABEL}=1"})
    except api_error:
        containers = []
    for info in containers:
        labels = info.get("Labels") or {}
        if labels.get("termrl.host") != host:
            continue
        try:
            pid = int(labels.get("termrl.pid", "0"))
        except ValueError:
            continue
        if pid and pid_alive(pid):
            continue
        try:
            api.remove_container(info["Id"], force=True, v=True)
            removed.append("container:" + (info.get("Names") or [info["Id"][:12]])[0].lstrip("/"))
        except api_error:
            pass
    try:
        volumes = (api.volumes(filters={"label": f"{LABEL}=1"}) or {}).get("Volumes") or []
    except api_error:
        volumes = []
    for volume in volumes:
        labels = volume.get("Labels") or {}
        if labels.get("termrl.host") != host or pid_alive(int(labels.get("termrl.pid", "0") or 0)):
            continue
        try:
            api.remove_volume(volume["Name"], force=True)
            removed.append(f"volume:{volume['Name']}")
        except api_error:
            pass
    return removed


def remove_dead_images(api, api_error: type[Exception], host: str) -> list[str]:
    """Remove the images this host's dead runs committed (whole-machine snapshots); return what was removed.

    Called after :func:`remove_dead_runs`, so no container of theirs still uses them.
    """
    removed = []
    try:
        images = api.images(filters={"label": f"{LABEL}=1"})
    except api_error:
        images = []
    for info in images:
        labels = info.get("Labels") or {}
        if labels.get("termrl.host") != host:
            continue
        try:
            pid = int(labels.get("termrl.pid", "0"))
        except ValueError:
            continue
        if not pid or pid_alive(pid):
            continue
        try:
            api.remove_image(info["Id"], force=True)
            removed.append(f"image:{info['Id'][7:19]}")
        except api_error:
            pass
    return removed
