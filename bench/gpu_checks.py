"""The GPU checks of lapa's training and serving paths, one section per call, each writing JSON into OUTDIR:

    python bench/gpu_checks.py SECTION OUTDIR [ARGS] [--dry]

- `env`: versions, the GPU, Lightning's peak FLOP/s for it, NCCL.
- `train [PRESET:COMPILE[:BATCH],...]`: `lapa.bench.train.bench_train` (bf16 on a GPU, tokens/s, MFU), e.g. `1b:0,1b:1:32`.
  Wherever a variant names COMPILE: 0 eager, 1 compiled blocks (inductor's default mode), or an inductor mode, e.g.
  `reduce-overhead` (CUDA graphs).
- `fsdp`: `lapa.foundation.train` under torchrun, one rank per GPU: FSDP2 over NCCL, bf16, activation checkpointing,
  sharded window checkpoints, with and without compiled blocks (the `small` foundation on toy data).
- `serve`: a randomly initialised fine-tuned VLA (tiny and 1b) in process (fp32 and bf16, batch 1 and 8) and through
  `lapa.bench.serve.bench_serve` (1-16 clients, threads or batches, the clients as threads of this process and then as
  processes of their own); `POLICY_PRECISION` sets the policy's precision.
- `laq`: `lapa.bench.laq.bench_laq` for every size, then the paper size with compiled blocks.
- `against PATH [PRECISION:COMPILE,...]`: `lapa.bench.laq.bench_laq_against`, lapa's LAQ step beside the official LAQ's
  (its code at PATH) at the small and paper sizes, lapa by default in fp32 and then in bf16, eager (`fp32:0,bf16:0`); the
  official always fp32 and eager, as its trainer runs.
- `laqopt`: lapa's LAQ step at the small and paper sizes with each optimiser update: fp32 fused, and under bf16
  autocast PyTorch's single-tensor loop (what `fused=False` used to select), its multi-tensor update and the fused one.
- `laqcompile`: whether lapa's LAQ step compiled (inductor's default mode, then `reduce-overhead`: CUDA graphs) trains
  as the eager one does: 30 bf16 steps of each from the same seed and frames (eager twice, for the noise floor), the
  largest relative difference of their losses and of their weight updates from the eager run's, ms per step.
- `laqtrain [COMPILE:PERSISTENT[:SIZE[:LR]],...]`: `lapa laq train` (Lightning) on toy video, blocks compiled or not, loader
  workers persistent or not, at the `small` size (64 px, batch 32, 300 steps; the default) or `paper` (256 px, batch 16,
  400 steps), at `laq.train.lr` LR (default: the config's) (default `0:1,1:1`); the pace over the whole run and after step
  50 (compiling and graph capture done).
- `render`: MuJoCo's off-screen rendering through EGL: which GL vendor and renderer EGL picked (NVIDIA's library or
  Mesa's llvmpipe on the CPU) and the frames per second of a Meta-World episode at 64 and 256 px. It needs mujoco,
  metaworld and PyOpenGL, which the GPU image may lack: carry their wheels and install them as the others.
- `cells CHAPTER [STOP_ID]`: a chapter's code cells in one namespace, `#| gpu` cells included, `#| slow` ones and
  IPython's `%`/`!` lines left out, up to the cell STOP_ID: nbdev's test runner for a machine without nbdev (the GPU
  image has none).

`--dry` runs the same code on the CPU at toy sizes (a check of the script, not a measurement). The figures of
2026-11-26 to 2026-11-28 on H200s are in `nbs/results/gpu_h200/` and chapters 10, 31, 52, 91, 92 and 95.
"""
import json, os, subprocess, sys, tempfile, time
from pathlib import Path

section, out = sys.argv[1], Path(sys.argv[2])


def compile_arg(c: str) -> bool | str:
    "A variant's COMPILE field: '0' eager, '1' compiled (inductor's default mode), else the inductor mode it names."
    return {"0": False, "1": True}.get(c, c)

dry = "--dry" in sys.argv
out.mkdir(parents=True, exist_ok=True)
import torch

def save(name, obj):
    (out / f"{name}.json").write_text(json.dumps(obj, indent=1, default=str))
    print(json.dumps(obj, default=str)[:3000], flush=True)

def peak_override():
    "989.4 TFLOP/s (NVIDIA's dense BF16 figure of the H100/H200 SXM) only where Lightning's table does not know the GPU."
    if not torch.cuda.is_available(): return None
    from lightning.fabric.utilities.throughput import get_available_flops
    return None if get_available_flops(torch.device("cuda"), torch.bfloat16) else 989.4

def toy_data(root, n=8, size=32):
    from lapa.shards import ShardSettings, write_dataset
    from lapa.testing import TOY_STATE_VIEWS, toy_episode
    d = Path(root) / "toy"
    write_dataset([toy_episode(f"toy-v3-s{i:06d}", T=40, size=size, seed=i) for i in range(n)], d, "actions",
                  ShardSettings(samples_per_shard=32, val_fraction=0.25, action_horizon=4), extra_info={"state_views": TOY_STATE_VIEWS}, progress=False)
    return d

if section == "env":
    import importlib.metadata as md
    info = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "python": sys.version.split()[0]}
    for p in ("lightning", "transformers", "numpy", "hydra-core", "webdataset", "safetensors", "huggingface_hub"):
        try: info[p] = md.version(p)
        except Exception as e: info[p] = repr(e)
    if torch.cuda.is_available():
        from lightning.fabric.utilities.throughput import get_available_flops
        info["lightning_peak_bf16"] = get_available_flops(torch.device("cuda"), torch.bfloat16)
        info["nccl"] = torch.cuda.nccl.version()
    save("env", info)

elif section == "train":   # lapa bench train: PRESET:COMPILE pairs in order (bf16, tokens/s, MFU)
    from lapa.bench.train import bench_table, bench_train
    pairs = [(p.split(":") + [None])[:3] for p in (sys.argv[3].split(",") if len(sys.argv) > 3 and not sys.argv[3].startswith("--") else ["tiny:0"])]
    rows = []
    for p, c, bs in pairs:
        t = time.time()
        try:
            kw = {"steps": 4, "warmup": 1, "batch_size": 8} if dry else ({"batch_size": int(bs)} if bs else {})
            r = bench_train(p, compile=compile_arg(c), peak_tflops=peak_override(), **kw)
            r["seconds_total"] = time.time() - t
        except Exception as e:
            r = {"preset": p, "compiled": compile_arg(c), "error": repr(e)[:2000]}
        rows.append(r); save(f"train_{p}_{c}_{bs}", r)
        if "error" not in r: print(bench_table([r]), flush=True)
        if torch.cuda.is_available(): torch.cuda.empty_cache()
    save("train_all", rows)

elif section == "laq":     # lapa bench laq: pairs/s of every size, then the paper size compiled
    from lapa.bench.laq import bench_laq
    res = {}
    for c, sizes in ((False, ("tiny",) if dry else ("tiny", "small", "paper")), (True, ("tiny",) if dry else ("paper",))):
        t = time.time()
        try: res[f"compiled={c}"] = bench_laq(sizes=sizes, steps=3 if dry else 10, warmup=1 if dry else 3, compile=c)
        except Exception as e: res[f"compiled={c}"] = {"error": repr(e)[:2000]}
        res[f"seconds compiled={c}"] = time.time() - t
        save("laq", res)

elif section == "fsdp":    # the foundation trainer under torchrun: FSDP2 over NCCL, bf16, compiled blocks, sharded windows
    tmp = Path(tempfile.mkdtemp()); data = toy_data(tmp)
    res = {}
    for name, extra in (("fsdp_compiled", ["training.compile=true"] + (["training.compile_backend=eager"] if dry else [])),
                        ("fsdp", [])):
        ov = ["experiment=smoke", f"run_dir={tmp / name}", f"training.datasets=[{data}]", "foundation.predict=actions",
              "foundation.model.size=small", "training.total_train_samples=" + ("64" if dry else "2048"), "training.num_checkpoints=2",
              "training.global_batch_size=32", "training.per_gpu_batch_size=32", "training.warmup_steps=5", "training.log_every=10",
              "training.wandb=disabled", "loader.num_workers=2", "training.strategy=fsdp", "training.checkpoint_format=sharded",
              "training.activation_checkpointing=true", *extra]
        t = time.time()
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=1", "-m", "lapa.foundation.train", *ov]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=200)
        sec = time.time() - t
        s = {"rc": r.returncode, "seconds": sec, "stderr_tail": r.stderr[-1500:]}
        sp = tmp / name / "foundation" / "summary.json"
        if sp.exists():
            summ = json.loads(sp.read_text())
            s.update({k: summ.get(k) for k in ("world_size", "strategy", "steps", "precision", "device")})
            s["history_last"] = (summ.get("history") or [None])[-1]
            ck = sorted((tmp / name / "foundation" / "checkpoints").glob("window_*"))
            s["checkpoints"] = [[c.name, sorted(f.name for f in (c / "sharded").iterdir())] if (c / "sharded").exists() else c.name for c in ck]
        s["backend"] = next((l.split("=", 1)[1] for l in r.stderr.splitlines() if l.startswith("distributed_backend=")), None)
        res[name] = s
        save("fsdp", res)

elif section == "serve":   # the fine-tuned VLA policy served on CUDA: tiny (the benchmark's size) and 1b
    from lapa.bench.serve import bench_serve, serve_table
    from lapa.config import load_cfg
    from lapa.foundation.model import build_foundation
    from lapa.policy import VLAPolicy
    from lapa.serving import observation_from_metadata
    tmp = Path(tempfile.mkdtemp()); data = toy_data(tmp, n=2)
    stats = json.loads((data / "stats.json").read_text())
    res = {}
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    for size in ("tiny",) if dry else ("tiny", "1b"):
        torch.manual_seed(0)
        cfg = load_cfg(["experiment=smoke", "foundation.predict=actions", f"foundation.dataset={data}", f"foundation.model.size={size}"])
        model, inproc = build_foundation(cfg, stats), {}
        pol = VLAPolicy(model, device=dev, precision=os.environ.get("POLICY_PRECISION", "auto"))
        obs = observation_from_metadata(pol.metadata)
        for prec in ("fp32", "bf16"):   # in process: batch 1 and 8, median of 20 after 3 warm-up passes
            p = VLAPolicy(model, device=dev, precision=prec)
            for bs in (1, 8):
                for _ in range(3): p.infer_batch([obs] * bs)
                ts = []
                for _ in range(20):
                    t = time.perf_counter(); p.infer_batch([obs] * bs); ts.append(1000 * (time.perf_counter() - t))
                inproc[f"{prec} batch {bs} ms"] = sorted(ts)[len(ts) // 2]
        rows = [r for cp in (False, True)   # the clients as threads of this process, then as processes of their own
                for r in bench_serve(pol, obs, clients=[1, 2] if dry else [1, 2, 4, 8, 16], requests=20 if dry else 50, workers=8,
                                     max_batch=[1, 8], batch_wait_ms=2.0, client_processes=cp)]
        res[size] = {"params": sum(q.numel() for q in model.parameters()), "device": dev, "in_process_median": inproc, "rows": rows}
        print(serve_table(rows), flush=True)
        save("serve_" + os.environ.get("POLICY_PRECISION", "auto"), res)
        del pol; torch.cuda.empty_cache() if dev == "cuda" else None

elif section == "against":   # lapa's LAQ step beside the official LAQ's, fp32 and lapa in bf16
    from lapa.bench.laq import bench_laq_against
    res = {}
    variants = sys.argv[4].split(",") if len(sys.argv) > 4 and not sys.argv[4].startswith("--") else ["fp32:0", "bf16:0"]
    for v in variants:
        prec, c = v.split(":"); t = time.time()
        try: res[v] = bench_laq_against(sys.argv[3], sizes=["small"] if dry else ["small", "paper"], batch_size=2 if dry else None, steps=2 if dry else 10,
                                        rounds=2 if dry else 5, warmup=1 if dry else 3, precision=prec, compile=compile_arg(c))
        except Exception as e: res[v] = {"error": repr(e)[:2000]}
        res[f"seconds {v}"] = time.time() - t
        save("against", res)

elif section == "laqopt":   # the LAQ step with each optimiser update (what fused=False cost under bf16 on CUDA)
    from lapa.bench.laq import _sync, default_batch, lapa_laq_step
    from lapa.laq.model import laq_arch
    from lapa.laq.train import laq_optimizer
    dev, res = torch.device("cuda" if torch.cuda.is_available() else "cpu"), {}
    single = lambda m: torch.optim.AdamW(m.parameters(), lr=1e-4, betas=(0.9, 0.99), fused=False)   # the old fused=False
    variants = {"fp32 fused": (None, None), "bf16 single-tensor": (torch.bfloat16, single),
                "bf16 multi-tensor": (torch.bfloat16, lambda m: laq_optimizer(m, 1e-4, 0.01)),
                "bf16 fused": (torch.bfloat16, lambda m: laq_optimizer(m, 1e-4, 0.01, fused=True))}
    for size in ("tiny",) if dry else ("small", "paper"):
        arch, bs = laq_arch(size=size), default_batch(size, dev)
        for name, (dtype, make_opt) in variants.items():
            torch.manual_seed(0)
            model, step = lapa_laq_step(arch, bs, dev, dtype, optimizer=make_opt)
            ms = []
            for _ in range(3):   # three timings of 10 steps, each after 3 warm-up steps
                for _ in range(3): step()
                _sync(dev); t = time.perf_counter()
                for _ in range(2 if dry else 10): step()
                _sync(dev); ms.append(round((time.perf_counter() - t) / (2 if dry else 10) * 1000, 1))
            res[f"{size} {name}"] = {"batch_size": bs, "ms_per_step": ms}
            save("laqopt", res)
            del model, step
            if dev.type == "cuda": torch.cuda.empty_cache()

elif section == "laqcompile":   # the LAQ step compiled and with CUDA graphs against eager: same losses and updates?
    from lapa.bench.laq import _sync, default_batch, lapa_laq_step
    from lapa.laq.model import laq_arch
    dev, res = torch.device("cuda" if torch.cuda.is_available() else "cpu"), {}
    flat = lambda m: torch.cat([p.detach().float().flatten() for p in m.parameters()]).cpu()
    modes = (("eager", False), ("eager_again", False), ("compiled", True), ("reduce-overhead", "reduce-overhead"))
    for size in ("tiny",) if dry else ("small", "paper"):
        arch, bs, runs = laq_arch(size=size), default_batch(size, dev), {}
        for name, mode in modes[:2] if dry else modes:
            torch.manual_seed(0)
            model, step = lapa_laq_step(arch, bs, dev, torch.bfloat16 if dev.type == "cuda" else None, mode)
            w0, losses = flat(model), []
            model.register_forward_hook(lambda m, i, o: losses.append(o.loss.detach()))
            for _ in range(5): step()
            _sync(dev); t = time.perf_counter()
            for _ in range(25): step()
            _sync(dev)
            runs[name] = (torch.stack(losses).float().cpu(), flat(model) - w0, (time.perf_counter() - t) / 25 * 1000)
            del model, step
            if dev.type == "cuda": torch.cuda.empty_cache()
        ref_l, ref_u, _ = runs["eager"]
        res[size] = {m: {"ms_per_step": round(ms, 1), "loss_first_last": [round(l[0].item(), 5), round(l[-1].item(), 5)],
                         "max_rel_loss_diff_vs_eager": round(((l - ref_l).abs() / ref_l.abs()).max().item(), 5),
                         "update_rel_diff_vs_eager": round(((u - ref_u).norm() / ref_u.norm()).item(), 5)}
                     for m, (l, u, ms) in runs.items()}
        save("laqcompile", res)

elif section == "laqtrain":   # lapa laq train on CUDA through Lightning, blocks compiled or not, at the small or paper size
    from lapa.config import LAQ_PRESETS, load_cfg
    from lapa.laq.train import train_laq
    from lapa.shards import ShardSettings, split_episodes, write_dataset
    from lapa.testing import toy_episode
    tmp = Path(tempfile.mkdtemp())

    def toy_video(size: int) -> Path:
        "40 toy episodes of 40 frames at SIZE px, written once per size."
        root = tmp / f"video{size}"
        if not root.exists():
            eps = [toy_episode(f"toy-v3-s{i:06d}", T=40, size=size, seed=i) for i in range(40)]
            write_dataset(eps, root, "video", ShardSettings(frame_gap_s=0.1, samples_per_shard=500, val_fraction=0.1),
                          split_episodes({"toy-v3": [e.episode_id for e in eps]}, 0.1), progress=False)
        return root

    import lightning.pytorch as pl

    class Clock(pl.Callback):
        "The steady pace: time from the end of step `warm` (compiling and CUDA graph capture done) to the last step's end."
        def __init__(self, warm: int): self.warm, self.t0, self.t1, self.steps = warm, None, None, 0
        def on_train_batch_end(self, trainer, *args):
            if trainer.global_step == self.warm:
                if torch.cuda.is_available(): torch.cuda.synchronize()
                self.t0 = time.perf_counter()
        def on_train_end(self, trainer, *args):
            if torch.cuda.is_available(): torch.cuda.synchronize()
            self.t1, self.steps = time.perf_counter(), trainer.global_step - self.warm

    res = {}
    variants = sys.argv[3].split(",") if len(sys.argv) > 3 and not sys.argv[3].startswith("--") else ["0:1", "1:1"]
    for v in variants:
        parts = v.split(":")
        c, pw, size, lr = parts[0], parts[1], parts[2] if len(parts) > 2 else "small", parts[3] if len(parts) > 3 else ""
        mode = compile_arg(c)
        pw = "true" if pw == "1" else "false"
        paper = size == "paper"
        image_size = 32 if dry else LAQ_PRESETS[size]["image_size"]
        batch = 16 if paper else 32
        comp = [f"laq.train.compile={str(bool(mode)).lower()}"] + ([f"laq.train.compile_mode={mode}"] if isinstance(mode, str) else [])
        o = [f"run_dir={tmp}/run{c}{pw}{size}{lr}", f"loader.persistent_workers={pw}", f"laq.dataset={toy_video(image_size)}",
             "laq.model.size=" + ("tiny" if dry else size), "laq.train.max_steps=" + ("20" if dry else "400" if paper else "300"),
             "laq.train.warmup_steps=20", "laq.train.ckpt_every=1000", "laq.train.log_every=50", f"loader.batch_size={batch}",
             "loader.num_workers=" + ("8" if paper else "4"), "laq.train.wandb=disabled", *comp,
             *([f"laq.train.lr={lr}"] if lr else [])] + (["laq.train.compile_backend=eager"] if dry and not isinstance(mode, str) else [])
        clock, t = Clock(5 if dry else 50), time.time()
        try:
            s = train_laq(load_cfg(o), callbacks=[clock]); s = {k: s.get(k) for k in ("steps", "seconds", "pairs_per_s", "device", "precision", "eval")}
            s["steady_pairs_per_s"] = round(clock.steps * batch / (clock.t1 - clock.t0), 1)   # after step 50
            s["steady_ms_per_step"] = round(1000 * (clock.t1 - clock.t0) / clock.steps, 1)
        except Exception as e: s = {"error": repr(e)[:2000]}
        s["wall"] = time.time() - t
        res[f"size={size} compile={mode if isinstance(mode, str) else str(mode).lower()} persistent_workers={pw}" + (f" lr={lr}" if lr else "")] = s
        save("laqtrain", res)

elif section == "render":   # MuJoCo through EGL: on the GPU (NVIDIA's EGL library) or on llvmpipe
    os.environ.setdefault("MUJOCO_GL", "egl"); os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
    res = {"egl_device_id": os.environ.get("MUJOCO_EGL_DEVICE_ID")}
    try:
        from lapa.sim import render_check
        res.update(render_check())
    except Exception as e: res["error"] = repr(e)[:2000]
    save("render", res)

elif section == "cells":   # a chapter's cells with the GPU ones, where nbdev is not installed
    import traceback
    chapter, stop = Path(sys.argv[3]), (sys.argv[4] if len(sys.argv) > 4 and not sys.argv[4].startswith("--") else None)
    ns, ran = {"__name__": "__main__"}, []
    for c in (c for c in json.loads(chapter.read_text())["cells"] if c["cell_type"] == "code"):
        src = "".join(c["source"])
        flags = [ln[2:].split()[:1] for ln in src.splitlines() if ln.startswith("#|")]
        if ["slow"] in flags: continue
        t = time.time()
        try: exec(compile("\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!"))), f"{chapter.name}:{c.get('id')}", "exec"), ns)
        except Exception: ran.append({"cell": c.get("id"), "error": traceback.format_exc()[-2000:]}); break
        ran.append({"cell": c.get("id"), "gpu": ["gpu"] in flags, "seconds": round(time.time() - t, 2)})
        if c.get("id") == stop: break
    save("cells_" + chapter.stem, {"chapter": chapter.name, "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu", "cells": ran})
    sys.exit(1 if "error" in ran[-1] else 0)
