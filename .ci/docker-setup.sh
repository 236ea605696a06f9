#!/usr/bin/env bash
# A Docker engine for the docker sandbox backend, on a machine without one; idempotent.
#
#   1. installs the engine from Debian's packages when missing (docker.io, containerd, runc,
#      tini for --init, iptables) plus debootstrap for the base image and openssh-server
#      (the tests reach the engine over ssh:// too, as a remote machine would);
#   2. starts dockerd in the background unless an engine already answers: no bridge and no
#      iptables (sandboxes use --network none), overlay2 storage, falling back to vfs where
#      overlay mounts are refused (an overlay root, an old kernel);
#   3. waits until `docker info` answers, then builds the suite's base image unless the
#      engine already has it (python -m pytest_termrl.sandbox.image ensure);
#   4. builds the base image's C/C++ toolchain variant unless the engine has it
#      (python -m pytest_termrl.sandbox.image ensure --with cpp: g++, make and cmake in one
#      layer on top, about 16 s and 340 MB; tasks whose graders build C run in it);
#   5. proves a sandbox-shaped container starts.
#
# Environment: TERMRL_DOCKER_IMAGE (default termrl-base:1), TERMRL_DOCKER_TOOLCHAINS (default
# cpp; the variants to ensure, space-separated, each a comma-separated list, "" for none), PYTHON (default .venv/bin/python),
# TERMRL_DOCKERD_LOG (default /var/log/termrl-dockerd.log), TERMRL_DOCKER_DRIVERS
# (default "overlay2 vfs"), TERMRL_DOCKER_DATA_ROOT (default /var/lib/docker).
set -euo pipefail
cd "$(dirname "$0")/.."

TAG=${TERMRL_DOCKER_IMAGE:-termrl-base:1}
TOOLCHAINS=${TERMRL_DOCKER_TOOLCHAINS-cpp}
PY=${PYTHON:-.venv/bin/python}
LOG=${TERMRL_DOCKERD_LOG:-/var/log/termrl-dockerd.log}
DRIVERS=${TERMRL_DOCKER_DRIVERS:-overlay2 vfs}
DATA_ROOT=${TERMRL_DOCKER_DATA_ROOT:-/var/lib/docker}
PIDFILE=/var/run/termrl-dockerd.pid
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

say() { printf '[docker-setup] %s\n' "$*" >&2; }

engine_answers() { timeout 10 docker info >/dev/null 2>&1; }

# -- 1. packages ----------------------------------------------------------------------
need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v containerd >/dev/null || need+=(containerd)
command -v runc >/dev/null || need+=(runc)
command -v docker-init >/dev/null || need+=(tini)
command -v iptables >/dev/null || need+=(iptables)
command -v debootstrap >/dev/null || [ -x /usr/sbin/debootstrap ] || need+=(debootstrap)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)  # the ssh:// engine test reaches dockerd through a loopback sshd
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
command -v docker >/dev/null || { say "no docker CLI after installing docker.io"; exit 1; }

# -- 2. the engine ----------------------------------------------------------------------
start_dockerd() {
  local driver=$1
  say "starting dockerd (storage driver $driver, log $LOG)"
  $SUDO mkdir -p "$(dirname "$LOG")" "$DATA_ROOT"
  # setsid: the engine outlives this script and the CI step that ran it.
  $SUDO setsid nohup dockerd \
    --host=unix:///var/run/docker.sock \
    --data-root="$DATA_ROOT" \
    --storage-driver="$driver" \
    --iptables=false --ip6tables=false --bridge=none --ip-forward=false --ip-masq=false \
    --exec-opt native.cgroupdriver=cgroupfs \
    --pidfile="$PIDFILE" \
    --log-level=warn \
    >>"$LOG" 2>&1 </dev/null &
  local pid=$!
  for _ in $(seq 1 60); do
    if engine_answers; then
      say "dockerd is up (pid $(cat "$PIDFILE" 2>/dev/null || echo "$pid"), driver $driver)"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null && ! { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }; then
      say "dockerd exited with driver $driver: $(tail -n 3 "$LOG" | tr '\n' ' ')"
      return 1
    fi
    sleep 0.5
  done
  say "dockerd did not answer within 30 s with driver $driver"
  $SUDO kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  return 1
}

if engine_answers; then
  say "a Docker engine already answers ($(docker info --format '{{.ServerVersion}}, {{.Driver}}' 2>/dev/null))"
else
  if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    say "a dockerd from an earlier run does not answer: stopping it"
    old=$(cat "$PIDFILE")
    $SUDO kill "$old" || true
    for _ in $(seq 1 40); do kill -0 "$old" 2>/dev/null || break; sleep 0.5; done
  fi
  started=
  for driver in $DRIVERS; do
    if start_dockerd "$driver"; then started=1; break; fi
  done
  [ -n "$started" ] || { say "no storage driver of '$DRIVERS' works here; see $LOG"; exit 1; }
fi

# -- 3. the base image --------------------------------------------------------------------
if [ ! -x "$PY" ]; then
  say "no $PY: installing the project (make install)"
  make install >/dev/null
fi
if ! "$PY" -c 'import docker' 2>/dev/null; then
  say "installing the Docker SDK into $PY"
  "$PY" -m pip install --quiet 'docker>=7.1'
fi
$SUDO "$PY" -m pytest_termrl.sandbox.image ensure --tag "$TAG"

# -- 4. toolchain variants -------------------------------------------------------------------
for names in $TOOLCHAINS; do
  $SUDO "$PY" -m pytest_termrl.sandbox.image ensure --tag "$TAG" --with "$names" >/dev/null
done

# -- 5. proof -------------------------------------------------------------------------------
out=$(docker run --rm --network none --read-only --cap-drop ALL --security-opt no-new-privileges \
  --init --user 1000:1000 --pids-limit 64 --memory 256m "$TAG" bash -c 'echo "$(id -u) $(python3 -c "print(6*7)")"')
[ "$out" = "1000 42" ] || { say "smoke container answered '$out', expected '1000 42'"; exit 1; }
say "ready: $(docker info --format 'engine {{.ServerVersion}}, storage {{.Driver}}, cgroup v{{.CgroupVersion}}' 2>/dev/null), image $TAG"
