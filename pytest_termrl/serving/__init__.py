"""Model servers: start, wait for and stop vLLM, llama.cpp or the embedded model; spread a run over endpoints."""
