"""The docs site, as far as this machine can build it: everything `nbdev_docs` does before it calls Quarto (nbdev.yml
and the sidebar from settings.ini, every chapter through nbdev's processors into _proc/, show_doc rendered), then
`quarto render` where Quarto is installed, with the rendered site checked: a page per chapter, the kept figures shown,
no relative link or image that points nowhere. Fails when a chapter does not process, two chapters would render to one
page, or a kept figure is lost."""
import html
import json
import re
import shutil
import subprocess
import sys
import time

from nbdev.config import get_config
from nbdev.doclinks import _nbpath2html
from nbdev.quarto import nbdev_sidebar, refresh_quarto_yml
from nbdev.serve import proc_nbs


def png_outputs(path):
    "How many PNG figures the notebook at `path` keeps as outputs."
    cells = json.loads(path.read_text())["cells"]
    return sum("image/png" in out.get("data", {}) for c in cells for out in c.get("outputs", []))


def dead_links(site):
    "Relative links and images of the rendered `site` that point to no file, as (page, target)."
    dead = []
    for page in site.glob("*.html"):
        for target in re.findall(r'(?:href|src)="([^"]+)"', page.read_text()):
            if re.match(r"(https?:|mailto:|#|data:|javascript:)", target): continue
            path = html.unescape(target).split("#")[0].split("?")[0]
            if path and not (page.parent / path).exists(): dead.append((page.name, target))
    return dead


if __name__ == "__main__":   # nbdev processes the chapters in spawned workers, which import this file again
    t0, cfg = time.time(), get_config()
    shutil.rmtree(cfg.config_path / "_proc", ignore_errors=True)
    refresh_quarto_yml()
    nbdev_sidebar.__wrapped__(path=cfg.nbs_path)
    chapters = sorted(p.name for p in cfg.nbs_path.glob("*.ipynb"))
    pages = {}
    for n in chapters: pages.setdefault(_nbpath2html(cfg.nbs_path / n).name, []).append(n)
    clash = {page: names for page, names in pages.items() if len(names) > 1}
    if clash: sys.exit(f"docs: chapters that render to the same page (nbdev names it after the file): {clash}")
    cache = proc_nbs(cfg.nbs_path, n_workers=2)
    missing = [n for n in chapters if not (cache / n).is_file()]
    if missing: sys.exit(f"docs: these chapters did not process: {missing}")
    figures = {n: png_outputs(cfg.nbs_path / n) for n in chapters}
    kept = [n for n in chapters if figures[n]]
    lost = [n for n in kept if png_outputs(cache / n) < figures[n]]
    if lost: sys.exit(f"docs: the saved figures of {lost} are gone after processing")
    sidebar = (cfg.nbs_path / "sidebar.yml").read_text()
    absent = [n for n in chapters if n not in sidebar]
    if absent: sys.exit(f"docs: the sidebar lacks {absent}")
    print(f"docs: {len(chapters)} chapters processed ({len(kept)} with saved figures) in {time.time() - t0:.0f} s -> {cache}")
    if not shutil.which("quarto"):
        print("docs: Quarto is not installed here, so the site itself is not rendered (nbdev_docs would install it)")
        sys.exit()
    version = subprocess.run(["quarto", "--version"], capture_output=True, text=True).stdout.strip()
    subprocess.run(["quarto", "render", "--no-cache"], cwd=cache, check=True)
    site = cache / cfg.doc_path.name
    page_of = {n: site / _nbpath2html(cfg.nbs_path / n).name for n in chapters if n != "index.ipynb"}
    unrendered = [n for n, page in page_of.items() if not page.is_file()] + ([] if (site / "index.html").is_file() else ["index.ipynb"])
    if unrendered: sys.exit(f"docs: Quarto wrote no page for {unrendered}")
    no_figure = [n for n in kept if n in page_of and "<img" not in page_of[n].read_text()]
    if no_figure: sys.exit(f"docs: the pages of {no_figure} show none of their saved figures")
    dead = dead_links(site)
    if dead: sys.exit(f"docs: links and images that point nowhere: {dead[:10]}")
    print(f"docs: Quarto {version} rendered {len(chapters)} pages into {site} ({len(kept)} with figures, no dead relative link) "
          f"in {time.time() - t0:.0f} s")
