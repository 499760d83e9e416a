"""Console bundle sizes (acceptance 3 of the console issue: the initial JavaScript under 400 KB gzipped).

Reads the production build in `frontend/dist` (run `npm --prefix frontend run build` first) and prints one
JSON line: what `index.html` makes the browser load before the first page renders (the entry script and its
modulepreload links, and the stylesheets), raw and gzipped at level 9 like a static file server's
precompressed copies, and the lazily loaded chunks each page fetches on first visit, largest first.

Usage: .venv/bin/python bench/console_bundle.py [--dist frontend/dist]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Assets referenced by index.html: <script src>, <link rel="modulepreload" href>, <link rel="stylesheet" href>.
ASSET_REFERENCE = re.compile(r'(?:src|href)="(?:[^"]*/)?(assets/[^"]+\.(?:js|css))"')


def sizes(path: Path) -> tuple[int, int]:
    raw = path.read_bytes()
    return len(raw), len(gzip.compress(raw, compresslevel=9))


def kilobytes(count: int) -> float:
    return round(count / 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=REPO / "frontend" / "dist")
    options = parser.parse_args()
    index = options.dist / "index.html"
    if not index.exists():
        raise SystemExit(f"{index} is missing: run `npm --prefix frontend run build` first")

    initial = sorted(set(ASSET_REFERENCE.findall(index.read_text())))
    initial_js = [name for name in initial if name.endswith(".js")]
    initial_css = [name for name in initial if name.endswith(".css")]
    lazy = sorted(
        (path for path in (options.dist / "assets").glob("*.js") if f"assets/{path.name}" not in initial_js),
        key=lambda path: path.stat().st_size,
        reverse=True,
    )

    def total(names: list[str]) -> tuple[int, int]:
        pairs = [sizes(options.dist / name) for name in names]
        return sum(raw for raw, _ in pairs), sum(packed for _, packed in pairs)

    js_raw, js_gzip = total(initial_js)
    css_raw, css_gzip = total(initial_css)
    print(
        json.dumps(
            {
                "initial_js_files": [Path(name).name for name in initial_js],
                "initial_js_kb": kilobytes(js_raw),
                "initial_js_gzip_kb": kilobytes(js_gzip),
                "initial_css_kb": kilobytes(css_raw),
                "initial_css_gzip_kb": kilobytes(css_gzip),
                "lazy_chunks": len(lazy),
                "largest_lazy_chunks_gzip_kb": {path.name: kilobytes(sizes(path)[1]) for path in lazy[:6]},
                "all_js_gzip_kb": kilobytes(js_gzip + sum(sizes(path)[1] for path in lazy)),
            }
        )
    )


if __name__ == "__main__":
    main()
