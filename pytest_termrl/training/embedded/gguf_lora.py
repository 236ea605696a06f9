"""Write a PEFT LoRA adapter as a GGUF LoRA adapter that llama.cpp loads next to its base GGUF.

llama.cpp's adapter file: ``general.type = "adapter"``, ``adapter.type = "lora"``,
``adapter.lora.alpha``, the base model's ``general.architecture``, and two tensors per
adapted weight, ``<gguf name>.lora_a`` (rank x in) and ``<gguf name>.lora_b`` (out x rank),
where the GGUF name comes from the ``gguf`` package's tensor-name map for the architecture
(``model.layers.3.mlp.down_proj`` -> ``blk.3.ffn_down.weight``). llama.cpp scales the
product by alpha / rank, as PEFT does. Served with ``--lora_path FILE`` (llama-cpp-python's
``lora_path``), so base and trained model differ only in the adapter.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..data import TrainingDataError

PEFT_PREFIX = "base_model.model."


class AdapterConversionError(TrainingDataError):
    """The adapter cannot be written for llama.cpp (names the file and the tensor or field)."""


@dataclass
class GgufLoraReport:
    out: Path
    architecture: str
    tensors: int
    rank: int
    alpha: float

    def to_dict(self) -> dict:
        return {"out": str(self.out), "architecture": self.architecture, "tensors": self.tensors, "rank": self.rank, "alpha": self.alpha}

    @classmethod
    def from_dict(cls, data: dict) -> "GgufLoraReport":
        return cls(Path(data["out"]), data["architecture"], int(data["tensors"]), int(data["rank"]), float(data["alpha"]))


def base_architecture(base_gguf: Path | str) -> tuple[str, int]:
    """(architecture, block count) of a GGUF model file, read from its metadata."""
    import gguf

    reader = gguf.GGUFReader(str(base_gguf))

    def field(key: str):
        if key not in reader.fields:
            raise AdapterConversionError(f"{base_gguf}: no {key} in the GGUF metadata")
        f = reader.fields[key]
        return f.parts[f.data[0]]

    arch = bytes(field("general.architecture")).decode()
    return arch, int(field(f"{arch}.block_count")[0])


def convert_peft_lora(adapter_dir: Path | str, base_gguf: Path | str, out: Path | str) -> GgufLoraReport:
    """Write ``adapter_dir`` (``save_pretrained`` output) as a GGUF LoRA adapter at ``out``."""
    import gguf
    import numpy as np
    from safetensors.numpy import load_file

    adapter_dir, out = Path(adapter_dir), Path(out)
    config_path = adapter_dir / "adapter_config.json"
    weights_path = adapter_dir / "adapter_model.safetensors"
    for path in (config_path, weights_path):
        if not path.is_file():
            raise AdapterConversionError(f"{path}: missing; expected a PEFT LoRA adapter folder (save_pretrained)")
    config = json.loads(config_path.read_text())
    if config.get("peft_type") != "LORA":
        raise AdapterConversionError(f"{config_path}: peft_type {config.get('peft_type')!r}; expected 'LORA'")
    for key in ("use_dora", "use_rslora"):
        if config.get(key):
            raise AdapterConversionError(f"{config_path}: {key} is set; llama.cpp scales adapters by alpha / rank only")
    if config.get("modules_to_save"):
        raise AdapterConversionError(f"{config_path}: modules_to_save {config['modules_to_save']}; expected LoRA weights only")
    if config.get("rank_pattern") or config.get("alpha_pattern"):
        raise AdapterConversionError(f"{config_path}: rank_pattern / alpha_pattern; expected one rank and alpha for every module")
    rank, alpha = int(config["r"]), float(config["lora_alpha"])

    arch_name, blocks = base_architecture(base_gguf)
    arch = next((a for a, name in gguf.MODEL_ARCH_NAMES.items() if name == arch_name), None)
    if arch is None:
        raise AdapterConversionError(f"{base_gguf}: architecture {arch_name!r} is unknown to the gguf package")
    names = gguf.get_tensor_name_map(arch, blocks)

    pairs: dict[str, dict[str, np.ndarray]] = {}
    for key, value in load_file(str(weights_path)).items():
        for part, suffix in (("a", ".lora_A.weight"), ("b", ".lora_B.weight")):
            if key.endswith(suffix):
                module = key[: -len(suffix)]
                module = module[len(PEFT_PREFIX):] if module.startswith(PEFT_PREFIX) else module
                pairs.setdefault(module, {})[part] = value
                break
        else:
            raise AdapterConversionError(f"{weights_path}: tensor {key!r} is neither lora_A nor lora_B")

    out.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(out), arch_name)
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, alpha)
    for module in sorted(pairs):
        pair = pairs[module]
        if set(pair) != {"a", "b"}:
            raise AdapterConversionError(f"{weights_path}: module {module!r} has lora_{'A' if 'a' in pair else 'B'} only")
        target = names.get_name(module + ".weight", try_suffixes=(".weight",))
        if target is None:
            raise AdapterConversionError(f"{weights_path}: module {module!r} has no {arch_name} GGUF tensor name")
        a, b = pair["a"].astype(np.float32), pair["b"].astype(np.float32)
        if a.shape[0] != rank or b.shape[1] != rank:
            raise AdapterConversionError(f"{weights_path}: module {module!r} has shapes {a.shape} / {b.shape}; expected rank {rank}")
        writer.add_tensor(target + ".lora_a", np.ascontiguousarray(a))
        writer.add_tensor(target + ".lora_b", np.ascontiguousarray(b))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return GgufLoraReport(out=out, architecture=arch_name, tensors=len(pairs), rank=rank, alpha=alpha)
