"""What runs inside the verifier's sandbox: the trusted runners, blame, the signed channel, pytest plugins.

These files are mounted read-only into the sandbox and run there as scripts by the harness's
own Python: each imports only the standard library, the trusted toolchain it runs (pytest,
_pytest, pluggy, and packaging where guarded) and its sibling modules here by bare name.
The host imports them as ordinary modules where it shares a constant or a reader with them.
"""
