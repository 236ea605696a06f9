"""This project's sandbox and collateral oracle lent to other harnesses: Harbor, Inspect (and mini-swe-agent as an agent here).

:mod:`.session` is what they share and imports nothing from them; each harness's module
imports its own package and is loaded only when that harness asks for it.
"""
