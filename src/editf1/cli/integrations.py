"""``edit-f1 install-metric`` and ``edit-f1 demo`` (:mod:`editf1.integrations`)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["add_commands"]


def add_commands(commands) -> None:
    """Register ``install-metric`` and ``demo``."""
    p = commands.add_parser(
        "install-metric",
        example="edit-f1 install-metric",
        help="make evaluate.load('edit_f1') work offline by its bare name",
        description="Copies the installed evaluate module into evaluate's module cache "
        "(HF_MODULES_CACHE), where evaluate looks for a bare name it cannot fetch.",
    )
    p.add_argument("--modules-cache", type=Path, help="default: evaluate's HF_MODULES_CACHE")
    p.set_defaults(run=_install_metric)
    p = commands.add_parser(
        "demo",
        example="edit-f1 demo --port 7860",
        help="the Gradio app for one pair (needs the demo extra)",
        description="Starts the Space app locally: paste a draft and a clinician reply, see "
        "the scores, the matched spans and expected deletions, the expected additions and "
        "every sentence's theme. Nothing leaves the machine unless --share is given.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to serve on (default %(default)s)")
    p.add_argument("--port", type=int, default=7860, help="port to serve on (default %(default)s)")
    p.add_argument("--share", action="store_true", help="open a public gradio.live link")
    p.set_defaults(run=_demo)


def _install_metric(args) -> int:
    from editf1.integrations.hf_metric import install_metric, metric_path

    target = install_metric(args.modules_cache)
    print(f"installed {metric_path() / 'edit_f1.py'} -> {target}")
    if args.modules_cache is None:
        print('evaluate.load("edit_f1") now loads it offline')
    else:  # evaluate looks there only if told
        print(
            f'with HF_MODULES_CACHE={args.modules_cache}, evaluate.load("edit_f1") loads it offline'
        )
    return 0


def _demo(args) -> int:
    from editf1.integrations.demo import build_demo

    build_demo().launch(server_name=args.host, server_port=args.port, share=args.share)
    return 0
