#!/usr/bin/env bash
# docker compose v2 (the CLI plugin) for Harbor's and Inspect's docker environments; idempotent.
#
# Debian bookworm's docker-compose package is compose v1 (a separate Python program); the next
# release's is compose v2, the `docker compose` plugin. Unless `docker compose version` already
# answers with v2, this script:
#   1. writes throwaway apt sources for that suite, derived from the machine's own: every source
#      of its release's main suite (deb822 .sources stanzas and one-line .list entries alike),
#      the suite's name rewritten; no host name is written here, and /etc/apt is left untouched
#      (its own folder for sources, lists and cache, removed on exit);
#   2. downloads the docker-compose package with apt (signatures checked with the machine's
#      keyrings) and unpacks it with dpkg -x, installing nothing through dpkg;
#   3. puts its plugin at /usr/local/lib/docker/cli-plugins/docker-compose, where every docker
#      CLI looks;
#   4. checks that `docker compose version` prints v2, failing loudly otherwise.
#
# Environment: TERMRL_COMPOSE_SUITE (default: trixie on buster, bullseye and bookworm, else the
# machine's own release), TERMRL_COMPOSE_PLUGIN_DIR (default /usr/local/lib/docker/cli-plugins).
# Needs the docker CLI (.ci/docker-setup.sh installs it); root, or sudo.
set -euo pipefail

PLUGIN_DIR=${TERMRL_COMPOSE_PLUGIN_DIR:-/usr/local/lib/docker/cli-plugins}
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

say() { printf '[compose-setup] %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

compose_v2() { timeout 20 docker compose version 2>/dev/null | grep -Eq '[Vv]ersion v?2\.'; }

command -v docker >/dev/null || die "no docker CLI: run .ci/docker-setup.sh first"
if compose_v2; then
  say "already there: $(docker compose version 2>&1 | head -n 1)"
  exit 0
fi

# -- 1. throwaway sources for the suite that ships compose v2 --------------------------------
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || die "/etc/os-release names no VERSION_CODENAME: not a Debian release this script knows"
case "$codename" in
  buster|bullseye|bookworm) default_suite=trixie ;;
  *) default_suite=$codename ;;
esac
SUITE=${TERMRL_COMPOSE_SUITE:-$default_suite}

work=$(mktemp -d /tmp/termrl-compose.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir -p "$work/sources" "$work/lists/partial" "$work/cache/archives/partial" "$work/deb" "$work/unpacked"
if getent passwd _apt >/dev/null; then  # apt downloads as _apt: let it write there
  chown _apt "$work/lists/partial" "$work/cache/archives/partial" "$work/deb"
fi

# deb822 stanzas (Types: deb) whose Suites hold the release's own suite, that suite alone, renamed.
for file in /etc/apt/sources.list.d/*.sources; do
  [ -f "$file" ] || continue
  awk -v from="$codename" -v to="$SUITE" '
    BEGIN { RS = ""; FS = "\n" }
    {
      keep = 0; deb = 0; off = 0; out = ""
      for (i = 1; i <= NF; i++) {
        line = $i
        if (line ~ /^[ \t]*#/) continue
        if (line ~ /^Types:/) { deb = (line ~ /[ \t]deb([ \t]|$)/); line = "Types: deb" }
        if (line ~ /^Enabled:[ \t]*(no|false)/) off = 1
        if (line ~ /^Suites:/) {
          n = split(substr(line, 8), suites, /[ \t]+/)
          for (j = 1; j <= n; j++) if (suites[j] == from) keep = 1
          line = "Suites: " to
        }
        out = out line "\n"
      }
      if (keep && deb && !off) printf "%s\n", out
    }' "$file" >>"$work/sources/next.sources"
done
# one-line entries: deb [options] URI SUITE COMPONENTS...
for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [ -f "$file" ] || continue
  awk -v from="$codename" -v to="$SUITE" '
    $1 != "deb" { next }
    {
      i = 2
      if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
      if ($(i + 1) == from) { $(i + 1) = to; print }
    }' "$file" >>"$work/sources/next.list"
done
[ -s "$work/sources/next.sources" ] || [ -s "$work/sources/next.list" ] ||
  die "no apt source of the suite '$codename' to derive '$SUITE' from (looked in /etc/apt/sources.list and sources.list.d)"
touch "$work/sources/next.list"

apt_opts=(
  -o "Dir::Etc::sourcelist=$work/sources/next.list"
  -o "Dir::Etc::sourceparts=$work/sources"
  -o "Dir::State::Lists=$work/lists"
  -o "Dir::Cache=$work/cache"
  -o "Dir::Etc::preferences=/dev/null"
  -o "Dir::Etc::preferencesparts=$work/sources"
)

# -- 2. download and unpack ------------------------------------------------------------------------
say "reading the package lists of '$SUITE' (derived from the machine's '$codename' sources)"
$SUDO apt-get "${apt_opts[@]}" -qq update || die "apt could not read the lists of '$SUITE'"
version=$(apt-cache "${apt_opts[@]}" policy docker-compose | awk '/Candidate:/ { print $2 }')
case "$version" in
  2.*|[3-9].*) ;;
  *) die "'$SUITE' offers docker-compose '${version:-none}', not compose v2" ;;
esac
say "downloading docker-compose $version from '$SUITE'"
(cd "$work/deb" && $SUDO apt-get "${apt_opts[@]}" -qq download "docker-compose=$version") ||
  die "apt could not download docker-compose $version"
deb=$(ls "$work"/deb/docker-compose_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || die "apt downloaded no docker-compose package"
dpkg -x "$deb" "$work/unpacked"

# -- 3. the plugin --------------------------------------------------------------------------------
plugin=
for candidate in usr/libexec/docker/cli-plugins/docker-compose usr/lib/docker/cli-plugins/docker-compose; do
  if [ -x "$work/unpacked/$candidate" ]; then plugin="$work/unpacked/$candidate"; break; fi
done
[ -n "$plugin" ] || die "the package $(basename "$deb") holds no docker CLI plugin (contents: $(cd "$work/unpacked" && find . -type f -perm -u+x | head -n 5 | tr '\n' ' '))"
"$plugin" version >/dev/null 2>&1 ||
  die "the plugin from $(basename "$deb") does not run here: $("$plugin" version 2>&1 | head -n 2 | tr '\n' ' ')"
$SUDO install -d -m 755 "$PLUGIN_DIR"
$SUDO install -m 755 "$plugin" "$PLUGIN_DIR/docker-compose"

# -- 4. proof --------------------------------------------------------------------------------------
compose_v2 || die "docker compose does not answer with v2 after installing $PLUGIN_DIR/docker-compose: $(docker compose version 2>&1 | head -n 2 | tr '\n' ' ')"
say "ready: $(docker compose version 2>&1 | head -n 1) ($PLUGIN_DIR/docker-compose, from docker-compose $version of '$SUITE')"
