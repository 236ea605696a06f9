"""Training on the harness's own episodes (extra ``[train]``: trl, peft, transformers, datasets, torch).

* ``data``  rollouts -> SFT chat data (safe successes only, never a test-split task), GRPO rows
* ``sft``   LoRA SFT with TRL's SFTTrainer (loss on assistant turns), vLLM-servable adapter
* ``grpo``  TRL's GRPOTrainer playing multi-turn episodes in fresh sandboxes (``env``)
* ``arms``  evaluation arms (base, SFT, GRPO) through the pytest plugin, one comparison table
* ``tiny``  a tiny local model for the CPU smoke tier

Command line: ``python -m pytest_termrl.training {data,sft,grpo,arms,tiny} ...``.
Importing this package (and ``data``, ``env``, ``arms``) imports no torch; ``sft``,
``grpo`` and ``tiny`` import it when they run.
"""
