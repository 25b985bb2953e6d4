"""The information-flow graph of a 64-token text (model/explain/flow.py) against one forward of the same text, in the
same run: interleaved rounds, medians, wall and CPU time, at --threads torch threads (1 by default, as bench/llm.py).

Rows: one forward (logits, no maps: the bench's common base, as bench/llm.py's lens row); the graph (every block
with its maps, each head's ‖A·v·W_O‖, the residual's and the MLP's norms, in one run of the blocks); what the page
adds to it (shares, relevance, the route at 10 %); one node's lens (what a click computes: the residual stream and
one row through the unembedding). Target: the graph ≤ 2× one forward (issue 56).

    python bench/flow.py [--tokens 64] [--rounds 5] [--threads 1]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from llm import interleaved_rounds, median_ms  # noqa: E402  (bench/llm.py: the same rounds, the same medians)
# English words the tokenizer reads one token each mostly, as bench/llm.py's text
WORDS = ("the teacher reads a short story to the class and every student listens while the rain falls on the old "
         "school near the river").split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    from model.explain.flow import flow_route, information_flow, node_lens
    from model.families import adapt
    from model.llama import load_smollm2

    loaded = load_smollm2()
    lab = adapt(loaded.name, loaded)
    words: list[str] = []
    while len(loaded.encode(" ".join(words))) < args.tokens:
        words.append(WORDS[len(words) % len(WORDS)])
    text = loaded.decode(loaded.encode(" ".join(words))[:args.tokens])
    ids = torch.tensor([loaded.encode(text)])
    flow = information_flow(lab, text)

    @torch.no_grad()
    def forward():
        loaded.model(ids, need_weights=False)

    def graph():
        information_flow(lab, text)

    def page():
        return flow_route(flow.edges, flow.residual_shares, 0.1), flow.relevance(), flow.head_shares

    def node():
        node_lens(lab, text, 15, ids.size(1) // 2)

    functions = {"one forward (logits, no maps)": forward, "the flow graph (information_flow)": graph,
                 "the page's shares, relevance and route": page, "one node's lens (a click)": node}
    load = os.getloadavg()[0]
    wall, cpu = interleaved_rounds(functions, args.rounds)
    base, base_cpu = median_ms(wall["one forward (logits, no maps)"]), median_ms(cpu["one forward (logits, no maps)"])
    print(f"\nThe information-flow graph, a {ids.size(1)}-token text, median of {args.rounds} interleaved rounds, "
          f"{args.threads} thread(s), load {load:.1f} → {os.getloadavg()[0]:.1f}:\n")
    print("| run | wall | CPU | × one forward (wall / CPU) | target |\n|---|---|---|---|---|")
    for (name, times), target in zip(wall.items(), ("", "≤ 2×", "", "")):
        print(f"| {name} | {median_ms(times):.0f} ms | {median_ms(cpu[name]):.0f} ms | {median_ms(times) / base:.2f}× / "
              f"{median_ms(cpu[name]) / base_cpu:.2f}× | {target} |")


if __name__ == "__main__":
    main()
