"""The LLM page's room (app_pages/llm.py): generation step by step, the KV cache, grouped-query attention."""
