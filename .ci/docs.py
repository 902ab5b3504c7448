"""The docs site, as far as this machine can build it: everything `nbdev_docs` does before it calls Quarto (nbdev.yml
and the sidebar from settings.ini, every chapter through nbdev's processors into _proc/, show_doc rendered), then
`quarto render` where Quarto is installed. Fails when a chapter does not process or a kept figure is lost."""
import shutil
import subprocess
import sys
import time

from nbdev.config import get_config
from nbdev.quarto import nbdev_sidebar, refresh_quarto_yml
from nbdev.serve import proc_nbs

if __name__ == "__main__":   # nbdev processes the chapters in spawned workers, which import this file again
    t0, cfg = time.time(), get_config()
    shutil.rmtree(cfg.config_path / "_proc", ignore_errors=True)
    refresh_quarto_yml()
    nbdev_sidebar.__wrapped__(path=cfg.nbs_path)
    cache = proc_nbs(cfg.nbs_path, n_workers=2)
    chapters = sorted(p.name for p in cfg.nbs_path.glob("*.ipynb"))
    missing = [n for n in chapters if not (cache / n).is_file()]
    if missing: sys.exit(f"docs: these chapters did not process: {missing}")
    kept = [n for n in chapters if "image/png" in (cfg.nbs_path / n).read_text()]
    lost = [n for n in kept if "image/png" not in (cache / n).read_text()]
    if lost: sys.exit(f"docs: the saved figures of {lost} are gone after processing")
    sidebar = (cfg.nbs_path / "sidebar.yml").read_text()
    absent = [n for n in chapters if n not in sidebar]
    if absent: sys.exit(f"docs: the sidebar lacks {absent}")
    print(f"docs: {len(chapters)} chapters processed ({len(kept)} with saved figures) in {time.time() - t0:.0f} s -> {cache}")
    if shutil.which("quarto"):
        subprocess.run(["quarto", "render", "--no-cache"], cwd=cache, check=True)
        print(f"docs: rendered by Quarto into {cache / cfg.doc_path.name}")
    else:
        print("docs: Quarto is not installed here, so the site itself is not rendered (nbdev_docs would install it)")
