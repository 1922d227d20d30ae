"""`tlscope viewer new NAME --template vanilla|react`: start a viewer from a template (docs/VIEWERS.md)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from tlscope.viewers import template_names
from tlscope.viewers.scaffold import new_viewer

NEXT_STEPS = {
    "vanilla": [
        "cd {path}",
        "tlscope serve $(tlscope corpus path simple) --viewer .   # open the URL it prints",
        "python -m pytest tests                                  # its browser test",
    ],
    "react": [
        "cd {path}",
        "npm ci && npm run build",
        "npm test                  # Vitest",
        "npm run test:browser      # Playwright against tlscope serve",
    ],
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tlscope viewer", description="Make viewers for the tlscope format.")
    sub = parser.add_subparsers(dest="action", required=True)
    new = sub.add_parser("new", help="copy a template into ./NAME with its name filled in")
    new.add_argument("name", type=Path, metavar="NAME", help="the new viewer's folder (its last part is the name)")
    new.add_argument("--template", choices=template_names(), default="vanilla", help="vanilla (no build step) or react")
    sub.add_parser("templates", help="list the templates")
    return parser


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if args.action == "templates":
        print("\n".join(template_names()))
        return 0
    files = new_viewer(args.name, args.template)
    print(f"Made {args.name}/ ({len(files)} files) from the {args.template} template. Next:")
    print("\n".join(NEXT_STEPS[args.template]).format(path=args.name))
    return 0
