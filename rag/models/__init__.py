"""The models: the embedding encoder (torch for bulk, NumPy for questions), the local or
OpenAI-compatible LLM, the CPU check that picks a llama.cpp build, and `rag adapt`'s training."""
