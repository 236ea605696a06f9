"""Offline stand-ins for installers (pip, uv, uvx, apt-get, curl, wget, add-apt-repository) and the rules they follow.

The tools and their rules live once, in :mod:`.inside.tools`, which runs inside sandboxes
(the agent's, through :mod:`pytest_termrl.sandbox.standin_shims`, and the verifier's,
through its script runner, and a Dockerfile's RUN steps, with the agent's shims) and is read
as a module by the importer's static check (:mod:`pytest_termrl.tasks.importers.standin_check`).

Toolchain installers are met from what the host already has, by one table of substitutions
(``tools.SUBSTITUTIONS``, read back by :func:`substitution_table`). A row matches a whole URL
fetched with ``curl`` or ``wget``, a repository given to ``add-apt-repository``, or a package
given to ``apt-get install``; its host condition is checked in the sandbox (the host's system
folders), under ``$TERMRL_STANDIN_ROOT`` when that is set. When it holds, the stand-in leaves
behind what the real installer would, linking the host's toolchain; when it does not, the
step fails with one line naming the Debian package to install on the host. Each row's log
line starts ``substituted: ROW:``.

=====================  ====================================================================  ======================================  ===================================
Row                    Matches                                                               Host condition                          Debian package when absent
=====================  ====================================================================  ======================================  ===================================
uv-installer           curl/wget ``astral.sh/uv/.../install.sh`` (or uv's releases)          none: the uv stand-in is on PATH        \\-
get-pip                curl/wget ``bootstrap.pypa.io/[pip/X.Y/]get-pip.py``                  the python running it imports pip       python3-pip
go-tarball             curl/wget ``go.dev/dl/goX.Y.Z.linux-ARCH.tar.gz`` (golang.org,        /usr/lib/go/bin/go                      golang-go
                       dl.google.com, storage.googleapis.com)
rustup                 curl/wget ``sh.rustup.rs``, ``static.rust-lang.org/rustup/...``       /usr/bin/cargo and /usr/bin/rustc       cargo
                       ``rustup-init[.sh]``
nvm                    curl/wget ``raw.githubusercontent.com/nvm-sh/nvm/vX/install.sh``      /usr/bin/node (its major for            nodejs
                                                                                             ``nvm install N``)
nodesource             curl/wget ``deb.nodesource.com/setup_N.x``                            /usr/bin/node of major N                nodejs
deadsnakes-ppa         add-apt-repository ``ppa:deadsnakes/ppa``                             none: its packages are the python3.X    \\-
                                                                                             rows
ubuntu-component       add-apt-repository ``main``, ``universe``, ``multiverse``,            none: apt-get checks each package       \\-
                       ``restricted``
python3.X              apt-get ``python3.X``, ``python3.X-minimal``                          /usr/bin/python3.X                      python3.X
python3.X-venv         apt-get ``python3.X-venv``, ``python3-venv``                          python3.X imports venv and ensurepip    python3.X-venv
python3.X-dev          apt-get ``python3.X-dev``, ``python3-dev``                            /usr/include/python3.X/Python.h         python3.X-dev
python3.X-distutils    apt-get ``python3.X-distutils``, ``python3-distutils``                python3.X imports distutils or          python3.X-distutils
                                                                                             setuptools                              (python3-setuptools from 3.12)
=====================  ====================================================================  ======================================  ===================================

What each leaves behind:

- **go-tarball**: a gzip'd tar (to stdout, ``-o``/``-O FILE``, or the URL's own name with
  ``curl -O``/plain ``wget``) of ``go/bin/go`` and ``go/bin/gofmt`` linking the host's, every
  other entry of the host's GOROOT linked, and ``go/VERSION`` the host's version: ``tar -C
  /usr/local -xzf`` leaves a working ``/usr/local/go/bin/go`` (the host's version, whatever
  version the URL asked).
- **rustup**: a ``rustup-init`` that, given ``-y``, links ``cargo``, ``rustc`` (and rustdoc,
  rustfmt, clippy where the host has them) into ``$CARGO_HOME/bin`` (default
  ``$HOME/.cargo``), writes ``$CARGO_HOME/env`` and a ``rustup`` whose ``default``,
  ``toolchain install``, ``component add`` and ``target add`` succeed for what the host has
  (``stable`` or the host's rustc version; its components and targets) and fail naming the
  rest; ``--default-toolchain`` and ``-c``/``-t`` are checked the same way.
- **nvm**: an ``install.sh`` writing ``$NVM_DIR/nvm.sh`` (default ``$HOME/.nvm``); its ``nvm``
  function's ``install``, ``use``, ``alias``, ``which``, ``current``, ``run``, ``exec`` accept
  the host's major (or ``node``, ``stable``, ``lts/*``, ``--lts``, the LTS code name of it) and
  link ``$NVM_DIR/versions/node/vX.Y.Z/bin/{node,npm,npx}`` to the host's; any other version
  fails naming it.
- **nodesource**: a setup script that succeeds when the host's node major is N (``apt-get
  install nodejs`` then meets it), and fails naming ``nodejs N (the host has M)`` otherwise.
- The script rows fail at run time when their host condition does not hold (a ``curl | sh``
  pipeline then fails too); the Go tarball fails at the fetch, so ``tar`` gets nothing.

``update-alternatives`` has no stand-in: the host's, run as root in a RUN step, writes
``/etc/alternatives`` in the layer like the real one. A real pip (``/opt/venv/bin/pip``,
``python3 -m pip``) is no stand-in either: ``tools.OFFLINE_PIP_ENV`` in its environment makes
it fail at once naming what is not there, and say ``Requirement already satisfied`` for what is.
"""

from __future__ import annotations

from .inside import tools


def substitution_table() -> list[tuple[str, str, str, str]]:
    """The substitutions' rows as (row, matches, host condition, Debian package when absent), in the table's order.

    ``matches`` is the stand-in that applies the row and the regular expression the whole URL,
    repository or package must match (``curl/wget: https://sh\\.rustup\\.rs/?...``).
    """
    return [(row.name, f"{row.tool}: {row.pattern}", row.host, row.package) for row in tools.SUBSTITUTIONS]
