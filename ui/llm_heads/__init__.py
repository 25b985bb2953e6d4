"""The LLM heads page's room (app_pages/llm_heads.py, on SmolLM2): attention sinks, the sliding window and induction
heads (view.py), finding a head and a head across many texts (finder.py), and the page's shareable widgets (specs.py).
Its finder is the attention explorer's (ui/attention/finder.py and finder_specs.py), so this room stands above
ui/attention/."""
