"""The training demo on the embedded Gemma 3 270M: GGUF fine-tuning, its chat rendering, the demo's stages."""
