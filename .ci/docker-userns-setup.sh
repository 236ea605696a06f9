#!/usr/bin/env bash
# A second Docker engine on this machine, with user namespaces remapped (userns-remap=default), for the
# whole-machine sandbox's tests on such an engine: root inside is dockremap's first subordinate id on the host.
# Idempotent; run after .ci/docker-setup.sh (the first engine holds the base image, which is copied in).
#
#   1. starts dockerd on its own socket, data root, exec root and pid file unless that socket answers
#      (the engine adds the dockremap account and its ranges to /etc/subuid and /etc/subgid itself);
#   2. loads the base image from the first engine unless this one has it (docker save | docker load).
#
# Environment: TERMRL_DOCKER_USERNS_HOST (default unix:///var/run/termrl-docker-userns.sock),
# TERMRL_DOCKER_IMAGE (default termrl-base:1), TERMRL_DOCKERD_USERNS_LOG (default /var/log/termrl-dockerd-userns.log).
set -euo pipefail
cd "$(dirname "$0")/.."

HOST=${TERMRL_DOCKER_USERNS_HOST:-unix:///var/run/termrl-docker-userns.sock}
TAG=${TERMRL_DOCKER_IMAGE:-termrl-base:1}
LOG=${TERMRL_DOCKERD_USERNS_LOG:-/var/log/termrl-dockerd-userns.log}
DATA_ROOT=/var/lib/termrl-docker-userns
EXEC_ROOT=/var/run/termrl-docker-userns
PIDFILE=/var/run/termrl-dockerd-userns.pid
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

say() { printf '[docker-userns-setup] %s\n' "$*" >&2; }
answers() { DOCKER_HOST=$HOST timeout 10 docker info >/dev/null 2>&1; }

if answers; then
  say "the remapped engine already answers at $HOST"
else
  $SUDO mkdir -p "$(dirname "$LOG")" "$DATA_ROOT" "$EXEC_ROOT"
  say "starting dockerd with userns-remap=default at $HOST (log $LOG)"
  # setsid: the engine outlives this script and the CI step that ran it.
  $SUDO setsid nohup dockerd \
    --host="$HOST" \
    --data-root="$DATA_ROOT" \
    --exec-root="$EXEC_ROOT" \
    --userns-remap=default \
    --storage-driver=overlay2 \
    --iptables=false --ip6tables=false --bridge=none --ip-forward=false --ip-masq=false \
    --exec-opt native.cgroupdriver=cgroupfs \
    --pidfile="$PIDFILE" \
    --log-level=warn \
    >>"$LOG" 2>&1 </dev/null &
  for _ in $(seq 1 60); do answers && break; sleep 0.5; done
  answers || { say "the remapped engine did not answer within 30 s: $(tail -n 3 "$LOG" | tr '\n' ' ')"; exit 1; }
fi
DOCKER_HOST=$HOST docker info --format '{{.SecurityOptions}}' | grep -q 'name=userns' \
  || { say "the engine at $HOST answers but does not remap user namespaces"; exit 1; }
if ! DOCKER_HOST=$HOST docker image inspect "$TAG" >/dev/null 2>&1; then
  say "loading $TAG from the first engine"
  docker save "$TAG" | DOCKER_HOST=$HOST docker load >/dev/null
fi
say "ready: root inside is host uid $(awk -F: '$1 == "dockremap" {print $2; exit}' /etc/subuid), image $TAG"
