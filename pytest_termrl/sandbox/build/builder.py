"""Build a Dockerfile by running it: each stage from the host standing in for its base, each step's layer cached by digest.

``RUN`` runs in a whole-machine sandbox over the layers so far (:mod:`.step_run`); ``COPY``
and ``ADD`` stage what they write on the host (:mod:`.context`) and unpack it inside such a
sandbox as root, so the overlay makes the layer exactly as a step would (existing folders
keep their owners and modes, links in the destination are followed inside the image);
``WORKDIR`` makes its folder when the image lacks it, owned by the ``USER``. ``ENV``,
``ARG``, ``USER``, ``SHELL``, ``CMD``, ``ENTRYPOINT``, ``LABEL``, ``EXPOSE``, ``VOLUME``,
``STOPSIGNAL`` change the image's configuration only; ``HEALTHCHECK``, ``ONBUILD`` and
``MAINTAINER`` are recorded as notes. Only the stages the target needs are built.

A step's key (:func:`.store.layer_key`) is its parent's key and everything the step reads:
the instruction, its environment, user, workdir and shell, the digest of the files it
copies. The first key of a stage from a stood-in base holds the host's identity
(:func:`.bases.host_identity`). A stage's steps run over the machine's lowers with the
base layer its base image would have: the bare one (no account 'user', no /home/user)
but for the harness's own base (:meth:`Builder.lowers_for`). A failed, stopped or overfull step caches nothing and
raises :class:`BuildError` naming its line, its exit code and its last output.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from ...errors import TaskFormatError
from ...standins.inside import tools as standin_tools
from ..base import SandboxSettings
from ..bwrap.lowers import MachineLowers
from ..bwrap.overlay import Account
from ..layout import SandboxFolders
from .accounts import ImageUser, resolve_user
from .bases import DEFAULT_PATH, base_links, base_workdir, has_harness_account, host_identity, stand_in
from .check import PLATFORM_ARGS
from .failure import BuildError, failure_message, missing_packages
from .archive import add_archive, is_archive
from .context import BuildContext, is_remote
from .copy_step import FROM_TAR, UNPACK_ARGV, download_argv, from_stage_argv, stage_tar, unpack_from, write_inline
from .copying import copy_into
from .ownership import Owner, SymbolicMode, parse_chmod, parse_chown
from .parser import Dockerfile, Instruction, from_parts, parse
from .shell_words import expand_heredoc
from .stage import CONFIG_KEYWORDS, Stage, configure, declare_args, expand_all, expand_one, needed_stages, next_workdir, split_stages
from .record import BuiltImage, StepLog
from .run_form import HEREDOC_SCRIPT, run_command
from .step_run import assemble, run_step
from .store import LayerInfo, LayerStore, layer_key, tree_bytes
from .view import MergedView

DEFAULT_BUILD_TIMEOUT_S = 600.0
"""A build's time when the task names none (Harbor's ``build_timeout_sec`` default)."""


@dataclass
class Builder:
    """Builds Dockerfiles over one machine's lowers into one store."""

    bwrap: str
    workroot: Path
    lowers: MachineLowers
    store: LayerStore
    settings: SandboxSettings
    echo: bool = False
    """Print each step as it starts and ends (the command line's ``build``)."""

    def __post_init__(self) -> None:
        self.folders = SandboxFolders(self.workroot, "sbx")
        """Step folders and staged files: in the work root (the range's root reaches them), removed with a killed run's."""
        self.store.hold()
        self.store.remove_stale_scratch()
        self._reach = self.lowers.reach(self.store.layers)

    def staging(self) -> Path:
        """A new folder for files a step reads (seen read-only inside), reachable by the sandbox's root."""
        path = self.folders.new("stage")
        os.chmod(path, 0o755)
        return path

    def lowers_for(self, base: str) -> MachineLowers:
        """The machine's lowers as an image ``FROM base`` lies on: the bare base layer unless ``base`` has the harness's account."""
        return self.lowers if has_harness_account(base) else self.lowers.bare()

    def trees(self, keys: list[str] | tuple[str, ...]) -> list[Path]:
        """The layers of ``keys`` (bottom first) as the sandboxes see them, topmost first."""
        return [self._reach / key / "tree" for key in reversed(keys)]

    def build(self, dockerfile: Path, context: Path | None = None, *, build_args: dict[str, str] | None = None,
              target: str | None = None, timeout_s: float | None = None) -> BuiltImage:
        context = context or dockerfile.parent
        parsed = parse(dockerfile.read_text(encoding="utf-8", errors="replace"), str(dockerfile))
        run = _Run(self, parsed, BuildContext.for_dockerfile(context, dockerfile), dict(build_args or {}),
                   time.monotonic() + (timeout_s or DEFAULT_BUILD_TIMEOUT_S), timeout_s or DEFAULT_BUILD_TIMEOUT_S)
        try:
            image = run.build(target)
        except BuildError as exc:
            self._write_log(run, None, str(exc))
            raise BuildError(f"{exc}\n(every step of this build: {run.log_path})", exc.steps, exc.missing) from None
        self.store.save_image(image.key, image.to_json())
        self._write_log(run, image.key, None)
        return image

    def _write_log(self, run: "_Run", key: str | None, failure: str | None) -> None:
        lines = [f"# build of {run.parsed.source}"]
        for step in run.steps:
            lines.append(step.line())
            if step.output and not step.cached:
                lines += ["    " + line for line in step.output.splitlines()[-200:]]
        if failure:
            lines.append(f"FAILED: {failure}")
        path = self.store.log_path(key or "failed-" + layer_key("log", run.parsed.source))
        path.write_text("\n".join(lines) + "\n")
        run.log_path = path


class _Run:
    """One build: the Dockerfile's stages, its context, its arguments and deadline, its log."""

    def __init__(self, builder: Builder, parsed: Dockerfile, context: BuildContext, build_args: dict[str, str],
                 deadline: float, timeout_s: float) -> None:
        self.b = builder
        self.parsed = parsed
        self.context = context
        self.build_args = build_args
        self.deadline = deadline
        self.timeout_s = timeout_s
        self.steps: list[StepLog] = []
        self.substitutions: list[str] = []
        self.stages: list[Stage] = []
        self.log_path: Path | None = None

    # -- stages -------------------------------------------------------------------------
    def build(self, target: str | None) -> BuiltImage:
        head, stages = split_stages(self.parsed)
        global_args = dict(PLATFORM_ARGS)
        for instruction in head:
            declare_args(instruction, global_args, global_args, self.build_args, global_args)
        self.global_args = global_args
        names: dict[str, int] = {}
        plans: list[tuple[str, str | None]] = []
        for index, instructions in enumerate(stages):
            written, stage_name = from_parts(instructions[0])
            image = expand_one(instructions[0], written or "", global_args)
            plans.append((image, stage_name))
            if stage_name:
                names[stage_name] = index
        last = len(stages) - 1
        if target is not None:
            if target.lower() not in names:
                raise TaskFormatError(self.parsed.source, "target", f"no stage named {target!r} (stages: {', '.join(names) or 'none named'})")
            last = names[target.lower()]
        self.names = names
        needed = needed_stages(stages, plans, names, last, self.global_args)
        built: dict[int, Stage] = {}
        for index in sorted(needed):
            built[index] = self._stage(index, stages[index], plans[index], built)
            self.stages.append(built[index])
        final = built[last]
        return self._image(final)

    def _stage(self, index: int, instructions: list[Instruction], plan: tuple[str, str | None], built: dict[int, Stage]) -> Stage:
        image, name = plan
        first = instructions[0]
        from_stage = image.lower() in self.names and self.names[image.lower()] < index
        if from_stage:
            stage = built[self.names[image.lower()]].following(index, name)
        else:
            what = stand_in(image)
            if what is None:
                raise BuildError(f"{first.where()}: FROM {image}: not an image the host can stand in for (the builder stands in "
                                 "for Debian, Ubuntu, python, buildpack-deps and Terminal-Bench's generic bases; this task needs the docker backend)")
            base_key = layer_key("base", image, host_identity())
            stage = Stage(index, name, image, f"{image}: {what}", base_key, env={"PATH": DEFAULT_PATH})
        self._step_log(first, f"FROM {image}" + (f" AS {name}" if name else ""), True, 0.0)
        if not from_stage:
            self._base_config(stage, first, image)
        for instruction in instructions[1:]:
            self._dispatch(stage, instruction)
        return stage

    def _base_config(self, stage: Stage, first: Instruction, image: str) -> None:
        """What a stood-in base's image has that the host may not: its commands (links), its WORKDIR (made as one is)."""
        for link, target in base_links(image).items():
            step = replace(first, keyword="RUN", flags=(), args=f"ln -s {target} {link}", json=None, heredocs=())
            argv = ["/bin/sh", "-c", '[ -e "$1" ] || ln -s "$2" "$1"', "link", link, target]
            self._root_layer(stage, step, layer_key(stage.parent, "LINK", link, target), argv)
        if base_workdir(image) != "/":
            stage.workdir = base_workdir(image)
            self._workdir(stage, replace(first, keyword="WORKDIR", flags=(), args=stage.workdir, json=None, heredocs=()))

    # -- instructions -------------------------------------------------------------------
    def _dispatch(self, stage: Stage, ins: Instruction) -> None:
        if ins.keyword in CONFIG_KEYWORDS:
            configure(stage, ins, self.build_args, self.global_args)
            self._step_log(ins, _short(ins), True, 0.0)
        elif ins.keyword == "WORKDIR":
            stage.workdir = next_workdir(stage, ins)
            self._workdir(stage, ins)
        elif ins.keyword == "RUN":
            self._run(stage, ins)
        elif ins.keyword in ("COPY", "ADD"):
            self._copy(stage, ins)
        else:
            raise TaskFormatError(ins.where(), ins.keyword, "an instruction the builder does not know")

    # -- steps that make layers -----------------------------------------------------------
    def _user(self, stage: Stage, ins: Instruction, spec: str | None = None) -> ImageUser:
        view = self._view(stage)
        wanted = spec if spec is not None else stage.user
        try:
            return resolve_user(wanted, view.read_text("/etc/passwd") or "", view.read_text("/etc/group") or "")
        except ValueError as exc:
            raise BuildError(f"{ins.where()}: {_short(ins)}: as USER {wanted}: {exc}") from None

    def _view(self, stage: Stage) -> MergedView:
        lowers = self.b.lowers_for(stage.base)
        return MergedView(self.b.trees(stage.layers), lowers.base, {m: lows[-1] for m, lows in lowers.slots.items()})

    def _run(self, stage: Stage, ins: Instruction) -> None:
        argv, script, notes = run_command(ins, stage.shell)
        stage.notes += notes
        user = self._user(stage, ins)
        env = self._run_env(stage, user)
        key = layer_key(stage.parent, "RUN", argv, script, sorted(env.items()), stage.user, stage.workdir)
        if script is None or self.b.store.has(key):
            self._layer(stage, ins, key, argv, user, env, None)
            return
        staging = self.b.staging()
        try:
            (staging / HEREDOC_SCRIPT).write_text(script)
            os.chmod(staging / HEREDOC_SCRIPT, 0o755)
            self._layer(stage, ins, key, argv, user, env, staging)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _run_env(self, stage: Stage, user: ImageUser) -> dict[str, str]:
        env = {**stage.args, **stage.env}
        env.setdefault("PATH", DEFAULT_PATH)
        env.setdefault("HOME", user.home or "/")
        return env

    def _workdir(self, stage: Stage, ins: Instruction) -> None:
        view = self._view(stage)
        if view.kind(stage.workdir) == "dir":
            self._step_log(ins, _short(ins), True, 0.0)
            return
        user = self._user(stage, ins)
        script = ('set -e; p=; for part in $(echo "$1" | tr "/" " "); do p="$p/$part"; '
                  'if [ ! -e "$p" ]; then mkdir "$p"; chown "$2" "$p"; fi; done')
        argv = ["/bin/sh", "-c", script, "workdir", stage.workdir, f"{user.uid}:{user.gid}"]
        key = layer_key(stage.parent, "WORKDIR", stage.workdir, user.uid, user.gid)
        self._root_layer(stage, ins, key, argv)

    def _copy(self, stage: Stage, ins: Instruction) -> None:
        keyword = ins.keyword
        scope = stage.scope()
        for flag in ins.flags:
            name = flag[2:].partition("=")[0]
            if name not in ("from", "chown", "chmod", "link", "exclude", "parents", "checksum", "keep-git-dir"):
                raise BuildError(f"{ins.where()}: {keyword} {flag}: a flag the builder does not know")
        words = [expand_one(ins, w, scope) for w in ins.json] if ins.json is not None else expand_all(ins, scope)
        if len(words) < 2:
            raise TaskFormatError(ins.where(), keyword, "expected at least one source and a destination")
        *sources, dest = words
        chown = ins.flag("chown")
        chmod = ins.flag("chmod")
        view = self._view(stage)
        owner: Owner | None = None
        if chown:
            owner = parse_chown(expand_one(ins, chown, scope), view.read_text("/etc/passwd") or "", view.read_text("/etc/group") or "", ins.where())
        mode = parse_chmod(expand_one(ins, chmod, scope), ins.where()) if chmod else None
        if keyword == "ADD" and any(is_remote(source) for source in sources):
            self._download(stage, ins, sources, dest, owner, mode)
            return
        docs = {doc.name: doc for doc in ins.heredocs}
        from_ref = ins.flag("from")
        staging = self.b.staging()
        try:
            tree = staging / "tree"
            tree.mkdir(mode=0o755)
            digest_parts: list[object] = []
            dest_abs = (dest if dest.startswith("/") else str(PurePosixPath(stage.workdir) / dest)) + ("/" if dest.endswith("/") else "")
            heredoc_sources = [s for s in sources if re.fullmatch(r"<<-?[\"']?[\w.-]+[\"']?", s)]
            plain = [s for s in sources if s not in heredoc_sources]
            for source in heredoc_sources:
                name = source.lstrip("<-").strip("'\"")
                doc = docs.get(name)
                if doc is None:
                    raise TaskFormatError(ins.where(), keyword, f"no heredoc named {name}")
                body = expand_heredoc(doc.body, scope) if doc.expand else doc.body
                target = str(PurePosixPath(dest_abs) / name) if dest.endswith("/") or len(sources) > 1 else dest_abs.rstrip("/")
                write_inline(tree, target, body.encode(), owner, mode)
                digest_parts.append(["heredoc", target, body])
            context = self.context
            if plain and from_ref is not None:
                ref = expand_one(ins, from_ref, scope)
                source_stage = self._source_stage(ins, ref)
                from_key = layer_key("from", source_stage.parent, plain, dest_abs, chown, chmod, digest_parts, stage.workdir, keyword)
                key = layer_key(stage.parent, keyword, from_key)
                if self.b.store.has(key):
                    self._cached(stage, ins, key)
                    return
                context = self._from_context(ins, source_stage, plain, staging)
                digest_parts.append(["from", from_key])
            resolved: list[Path] = []
            for source in plain:
                if is_remote(source):
                    raise BuildError(f"{ins.where()}: {keyword} {source}: a download over the network, which the build does not have")
                resolved += context.sources(source, ins.where())
            if plain:
                digest_parts.append(["files", context.digest(resolved)])
                if keyword == "ADD" and len(resolved) == 1 and resolved[0].is_file() and is_archive(resolved[0]):
                    add_archive(tree, resolved[0], dest, where=ins.where(), owner=owner, host_id=lambda i: i, workdir=stage.workdir)
                else:
                    if len(plain) > 1 or any(any(c in s for c in "*?[") for s in plain) or heredoc_sources:
                        if not dest.endswith("/") and view.kind(dest_abs) != "dir":
                            raise TaskFormatError(ins.where(), keyword, f"when copying several sources the destination must be a folder ending in '/' (got {dest!r})")
                    copy_into(tree, context, resolved, dest, where=ins.where(), owner=owner, chmod=mode,
                              host_id=lambda i: i, workdir=stage.workdir, existing=view.kind)
            if from_ref is None or not plain:
                key = layer_key(stage.parent, keyword, sources, dest_abs, chown, chmod, digest_parts, stage.workdir)
            if self.b.store.has(key):
                self._cached(stage, ins, key)
                return
            archive = staging / "stage"
            stage_tar(tree, archive, ins.where())
            argv = list(UNPACK_ARGV)
            self._root_layer(stage, ins, key, argv, archive)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _download(self, stage: Stage, ins: Instruction, sources: list[str], dest: str, owner: Owner | None,
                  mode: int | SymbolicMode | None) -> None:
        """``ADD URL DEST``: the file the offline stand-ins' table gives for that URL (rustup's script, Go's tarball),
        fetched inside by their curl, mode 0600 as the engine gives a download (or ``--chmod``); else the step fails naming it."""
        if len(sources) != 1:
            raise BuildError(f"{ins.where()}: ADD of several sources with a URL among them: the builder adds one URL at a time")
        url = sources[0]
        if standin_tools.download_row(url) is None:
            raise BuildError(f"{ins.where()}: ADD {url}: a download over the network, which the build does not have "
                             "(no offline stand-in meets this URL)")
        target = (dest if dest.startswith("/") else str(PurePosixPath(stage.workdir) / dest)) + ("/" if dest.endswith("/") else "")
        argv = download_argv(url, target, mode, owner)
        key = layer_key(stage.parent, "ADD-URL", url, target, argv[-2:])
        self._root_layer(stage, ins, key, argv)

    def _source_stage(self, ins: Instruction, ref: str) -> Stage:
        index = self.names.get(ref.lower(), int(ref) if ref.isdigit() else None)
        source_stage = next((s for s in self.stages if s.index == index), None)
        if source_stage is None:
            raise BuildError(f"{ins.where()}: {ins.keyword} --from={ref}: not a stage of this Dockerfile built before it "
                             "(an image by name would be pulled, which the build cannot do)")
        return source_stage

    def _from_context(self, ins: Instruction, source_stage: Stage, sources: list[str], staging: Path) -> BuildContext:
        """The files ``COPY --from=<stage>`` names, taken out of that stage's image into a folder read as a context."""
        folder = self.b.folders.new("build")
        result, storage = run_step(self.b.bwrap, self.b.workroot, folder, self.b.lowers_for(source_stage.base), self.b.trees(source_stage.layers),
                                   argv=from_stage_argv(sources), account=Account(0, 0, "root", "/root"), groups=(), cwd="/",
                                   env={"PATH": DEFAULT_PATH}, settings=self.b.settings, timeout_s=self._left(ins))
        out = staging / "from"
        try:
            if result.exit_code != 0:
                raise BuildError(f"{ins.where()}: {ins.keyword} --from={ins.flag('from')}: {' '.join(sources)} not found in that stage: "
                                 f"{result.output.strip()[-300:]}")
            unpack_from(folder / "io" / Path(FROM_TAR).name, out, ins.where())
        finally:
            storage.release()
            shutil.rmtree(folder, ignore_errors=True)
        return BuildContext(out, None)

    # -- one layer ----------------------------------------------------------------------
    def _left(self, ins: Instruction) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise BuildError(f"{ins.where()}: the build ran past its {self.timeout_s:.0f} s (build_timeout_sec) before this step")
        return left

    def _cached(self, stage: Stage, ins: Instruction, key: str) -> None:
        self._stood_in(self.b.store.info(key).standins)
        stage.layers.append(key)
        stage.parent = key
        self._step_log(ins, _short(ins), True, 0.0, layer=key)

    def _root_layer(self, stage: Stage, ins: Instruction, key: str, argv: list[str], stage_dir: Path | None = None) -> None:
        """A layer of the harness's own making (a folder, a copy, a link): root's, from /, on the base's PATH."""
        self._layer(stage, ins, key, argv, ImageUser(0, 0, "root", "/root"), {"PATH": DEFAULT_PATH}, stage_dir, cwd="/")

    def _layer(self, stage: Stage, ins: Instruction, key: str, argv: list[str], user: ImageUser, env: dict[str, str],
               stage_dir: Path | None, cwd: str | None = None) -> None:
        store = self.b.store
        if store.has(key):
            self._cached(stage, ins, key)
            return
        with store.building(key) as must_build:
            if not must_build:
                self._cached(stage, ins, key)
                return
            if self.b.echo:
                print(f"{ins.where()}: {_short(ins)} ...", flush=True)
            started = time.monotonic()
            run_env = {**env, **standin_tools.OFFLINE_PIP_ENV, "TERMRL_STANDIN_BUILD": "1"}
            run_env["PATH"] = f"/opt/termrl/standins/bin:{env.get('PATH', DEFAULT_PATH)}"
            folder = self.b.folders.new("build")
            result, storage = run_step(self.b.bwrap, self.b.workroot, folder, self.b.lowers_for(stage.base), self.b.trees(stage.layers),
                                       argv=argv, account=Account(user.uid, user.gid, user.name, user.home), groups=user.groups,
                                       cwd=cwd or stage.workdir, env=run_env, settings=self.b.settings, timeout_s=self._left(ins),
                                       stage=stage_dir)
            try:
                seconds = time.monotonic() - started
                self._stood_in(result.standin_lines)
                if result.exit_code != 0 or result.storage_full:
                    self._step_log(ins, _short(ins), False, seconds, result.exit_code, result.output)
                    message = failure_message(ins.where(), _short(ins), result.exit_code, result.output, timed_out=result.timed_out,
                                              storage_full=result.storage_full, timeout_s=self.timeout_s,
                                              storage_bytes=self.b.settings.storage_bytes)
                    raise BuildError(message, tuple(self.steps), missing_packages(result.standin_lines, result.output))
                scratch = store.scratch()
                try:
                    assemble(storage.path / "upper", scratch / "tree")
                    info = LayerInfo(key, stage.parent, ins.where(), _short(ins), round(seconds, 3), tree_bytes(scratch / "tree"), time.time(),
                                     tuple(result.standin_lines))
                    store.commit(key, scratch, info)
                except BaseException:
                    shutil.rmtree(scratch, ignore_errors=True)
                    raise
            finally:
                storage.release()
                shutil.rmtree(folder, ignore_errors=True)
        stage.layers.append(key)
        stage.parent = key
        self._step_log(ins, _short(ins), False, seconds, 0, result.output, layer=key)

    def _stood_in(self, lines: tuple[str, ...]) -> None:
        self.substitutions += [line for line in lines if line not in self.substitutions]

    def _step_log(self, ins: Instruction, text: str, cached: bool, seconds: float, exit_code: int | None = 0,
                  output: str = "", layer: str | None = None) -> None:
        step = StepLog(ins.where(), text, cached, round(seconds, 3), exit_code, output[-4000:], layer)
        self.steps.append(step)
        if self.b.echo and not (cached and layer is None and ins.keyword != "FROM"):
            print(step.line(), flush=True)

    def _image(self, final: Stage) -> BuiltImage:
        config = [final.parent, sorted(final.env.items()), final.user, final.workdir, final.shell, final.cmd, final.entrypoint,
                  sorted(final.labels.items()), final.exposed, final.volumes, final.stopsignal]
        return BuiltImage(
            key=layer_key("image", config),
            dockerfile=self.parsed.source,
            base=final.base,
            stand_in=final.stand_in,
            layers=tuple(final.layers),
            env=tuple(final.env.items()),
            user=final.user,
            workdir=final.workdir,
            shell=final.shell,
            cmd=final.cmd,
            entrypoint=final.entrypoint,
            labels=tuple(final.labels.items()),
            exposed=tuple(final.exposed),
            volumes=tuple(final.volumes),
            stopsignal=final.stopsignal,
            substitutions=tuple(self.substitutions),
            notes=tuple(final.notes),
            steps=tuple(self.steps),
        )


def _short(ins: Instruction) -> str:
    text = " ".join([ins.keyword, *ins.flags, ins.args]).replace("\n", " ")
    return text if len(text) <= 100 else text[:97] + "..."
