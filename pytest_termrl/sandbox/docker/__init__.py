"""The docker backend (extra ``[docker]``): one container per episode, on an engine here or elsewhere.

One job per module, none importing this one:

- :mod:`.engine`: the SDK and client, whether the engine is on this machine, what the run holds there, the exit hook;
- :mod:`.cleanup`: what killed runs left on the engine;
- :mod:`.layout`: the container's shape, and where trusted mounts go in it;
- :mod:`.exec`: processes in a container (the shell's channel, the verifier, the harness's root commands);
- :mod:`.kill`: killing every process of the agent in a container;
- :mod:`.volumes`: the verifier's trusted mounts as read-only volumes (remote engine);
- :mod:`.local`: the sandbox on an engine of this machine (bind-mounted home);
- :mod:`.remote`: the sandbox on an engine of another machine (volumes and a mirror);
- :mod:`.machine_support`: what the engine offers whole-machine sandboxes (local, overlay2, user namespaces, sizes);
- :mod:`.machine_layer`: a whole-machine task's workdir, files and decoys, put in before the shell starts;
- :mod:`.machine`: the whole-machine sandbox (the task's user, the container's upper layer as its change record);
- :mod:`.machine_run`: the verifier on a whole-machine snapshot (a container of the committed image);
- :mod:`.backend`: :class:`DockerBackend`, which picks local or remote once.

The base image and task images are :mod:`pytest_termrl.sandbox.docker.images.base`'s. The backend is
registered, lazily, in :mod:`pytest_termrl.sandbox`.
"""

from .backend import DockerBackend
from .engine import engine_is_local
from .local import DockerSandbox, task_image_for
from .remote import RemoteDockerSandbox

__all__ = ["DockerBackend", "DockerSandbox", "RemoteDockerSandbox", "engine_is_local", "task_image_for"]
