"""``edit-f1 export-dataset`` (:mod:`editf1.builders`), and the dataset options of
``score --dataset`` and ``draft --dataset``."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from editf1.builders import BUILDER_NAMES, SYPPM_COLLECTION

__all__ = ["add_commands", "add_dataset_options", "dataset_rows"]

#: The builder options: flag -> builder config field.
_OPTIONS = {
    "--revision": "revision",
    "--hub-repo": "hub_repo",
    "--export-file": "export_files",
    "--column-map": "column_map",
    "--keep-column": "keep_columns",
    "--split-fractions": "split_fractions",
    "--split-seed": "seed",
    "--list-separator": "list_separator",
    "--export-format": "file_format",
}


def _given(args) -> dict:
    """``{flag: value}`` of the builder options given."""
    values = {flag: getattr(args, flag[2:].replace("-", "_"), None) for flag in _OPTIONS}
    return {flag: value for flag, value in values.items() if value is not None}


def _fractions(text: str) -> dict[str, float]:
    """``"train=0.8,test=0.2"`` -> ``{"train": 0.8, "test": 0.2}``."""
    out = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise argparse.ArgumentTypeError(f"expected name=fraction pairs, got {part!r}")
    return out


def _column_map(text: str) -> dict[str, str]:
    """A JSON object of strings, inline or in a ``.json`` file (UTF-8, BOM allowed)."""
    path = Path(text)
    try:
        source = path.read_text(encoding="utf-8-sig") if path.suffix == ".json" else text
    except OSError as error:
        raise argparse.ArgumentTypeError(
            f"--column-map file {path} cannot be read ({error.strerror})"
        ) from None
    except UnicodeDecodeError:
        raise argparse.ArgumentTypeError(f"--column-map file {path} is not UTF-8") from None
    try:
        value = json.loads(source)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"--column-map is not valid JSON ({error})") from None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise argparse.ArgumentTypeError("--column-map must be a JSON object of strings")
    return value


def add_dataset_options(p: argparse.ArgumentParser) -> None:
    """``--dataset``, ``--config``, ``--split``, ``--data-dir`` and the builder options."""
    g = p.add_argument_group("a known dataset instead of a file")
    g.add_argument(
        "--dataset",
        metavar="NAME|FOLDER",
        help="a dataset split: demo, oncqa, kqa, expertqa_medicine, syppm, ippm, socppm, "
        "hospital_export, or a Hub-ready folder (see export-dataset)",
    )
    g.add_argument("--config", help="the dataset's config (default: its default config)")
    g.add_argument("--split", help="the split (default: test, or the only split)")
    g.add_argument("--data-dir", type=Path, help="folder of the dataset's files")
    _add_builder_options(p)


def _add_builder_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("dataset builder options")
    g.add_argument("--cache-dir", type=Path, help="datasets cache (default: a temporary folder)")
    g.add_argument(
        "--download",
        action="store_true",
        help="without --data-dir: download the pinned upstream files (or a Hub dataset)",
    )
    g.add_argument("--revision", help="upstream revision to download (git commit or Hub sha)")
    g.add_argument(
        "--hub-repo",
        help="syppm: the Hub dataset repository to download, one of the collection "
        f"{SYPPM_COLLECTION} where the paper releases SyPPM",
    )
    g.add_argument(
        "--export-file",
        action="append",
        help="an export file in --data-dir (repeat; default: every data file there)",
    )
    g.add_argument(
        "--column-map",
        type=_column_map,
        help='JSON (inline or a .json file): {"message": "PATIENT_TEXT", ...}',
    )
    g.add_argument("--keep-column", action="append", help="carry this export column (repeat)")
    g.add_argument(
        "--split-fractions", type=_fractions, help="split shares, e.g. train=0.8,test=0.2"
    )
    g.add_argument("--split-seed", type=int, help="seed of the split shuffle (default 0)")
    g.add_argument("--list-separator", help="separator of list fields in text cells (;)")
    g.add_argument(
        "--export-format", choices=["auto", "csv", "jsonl", "parquet"], help="export file format"
    )


def _builder_kwargs(args, name: str) -> dict:
    """The builder options given, checked against the builder's config."""
    from dataclasses import fields

    from editf1.builders import builder_class

    accepted = {f.name for f in fields(builder_class(name).BUILDER_CONFIG_CLASS)}
    kwargs = {}
    for flag, value in _given(args).items():
        if _OPTIONS[flag] not in accepted:
            raise ValueError(f"{flag} does not apply to dataset {name!r}")
        kwargs[_OPTIONS[flag]] = tuple(value) if isinstance(value, list) else value
    if args.data_dir is None and not args.download and name != "demo":
        raise ValueError(
            f"dataset {name} needs --data-dir (folder of its files), or --download to fetch "
            "the pinned upstream files"
        )
    if args.data_dir is not None:
        kwargs["data_dir"] = str(args.data_dir)
    return kwargs


def dataset_rows(args, reference_fields: list[str]) -> tuple[str, list[dict]]:
    """``(run name, rows)`` of ``--dataset`` (a builder name, a Hub-ready folder, or with
    ``--download`` a Hub dataset id); the rows have ``--prediction-field`` and
    ``reference_fields``. The run name is ``<dataset>_<config>[_<split> unless test]``.

    Raises:
        ValueError: for an unknown dataset, config or split, missing columns, an option
            the dataset does not take, or a missing --data-dir.
        OSError: for a Hub dataset that cannot be downloaded (no network, offline).
    """
    import datasets

    from editf1.builders import choose_split, load_builder

    if args.no_progress or args.quiet:
        datasets.disable_progress_bars()
    config = args.config
    with tempfile.TemporaryDirectory(prefix="editf1-cache-") as tmp:
        cache_dir = str(args.cache_dir or tmp)
        if args.dataset in BUILDER_NAMES:
            label = args.dataset
            kwargs = _builder_kwargs(args, label)
            builder = load_builder(label, config, cache_dir=cache_dir, **kwargs)
            builder.download_and_prepare()
            splits, config = builder.as_dataset(), builder.config.name
            pair_configs = [
                c.name for c in type(builder).BUILDER_CONFIGS if c.kind.startswith("pairs")
            ]
        else:
            path = Path(args.dataset)
            hub = not path.is_dir()  # --revision pins a Hub dataset; other options would be lost
            if not hub:
                source, label, kind = str(path), path.resolve().name, "a folder"
            elif args.download and "/" in args.dataset:
                source, label, kind = args.dataset, args.dataset.replace("/", "__"), "a Hub dataset"
            else:
                raise ValueError(
                    f"--dataset {args.dataset!r} is neither a known dataset "
                    f"({', '.join(BUILDER_NAMES)}) nor a folder; a Hub repository id needs "
                    "--download"
                )
            if given := [f for f in _given(args) if not (f == "--revision" and hub)]:
                raise ValueError(
                    f"{', '.join(given)} do(es) not apply to {kind} (--dataset {args.dataset}); "
                    "builder options apply to the known datasets"
                    + (", and --revision to a Hub dataset" if hub else "")
                )
            try:
                splits = datasets.load_dataset(
                    source, config, cache_dir=cache_dir, revision=args.revision
                )
            except ConnectionError as error:
                if not hub:
                    raise
                raise ConnectionError(_offline_hub_dataset(args.dataset, args.revision)) from error
            config = config or next(iter(splits.values())).info.config_name
            pair_configs = []
        split = choose_split(splits, args.split, f"{label}/{config}")
        rows = splits[split].to_list()
        columns = splits[split].column_names
    missing = [c for c in (args.prediction_field, *reference_fields) if c not in columns]
    if missing:
        hint = f"; score a pairs config: {pair_configs}" if pair_configs else ""
        raise ValueError(f"{label}/{config} has no column {missing} (it has {columns}){hint}")
    name = f"{label}_{config}" + ("" if split == "test" else f"_{split}")
    return name, rows


def _offline_hub_dataset(repo: str, revision: str | None) -> str:
    pinned = f"revision {revision}" if revision else "no --revision (the main branch)"
    download = f"hf download {repo} --repo-type dataset" + (
        f" --revision {revision}" if revision else ""
    )
    return (
        f"--dataset {repo} ({pinned}) cannot be downloaded: the Hub cannot be reached "
        "(offline mode or no network), and the download cache is a temporary folder "
        f"unless --cache-dir is given. Next: where the Hub is reachable, `{download} "
        "--local-dir DIR`, then score the folder: --dataset DIR (no --download); or run "
        "this command once online with --cache-dir DIR and offline again with the same "
        "--cache-dir DIR"
    )


def add_commands(commands) -> None:
    """Register ``export-dataset``."""
    p = commands.add_parser(
        "export-dataset",
        example="edit-f1 export-dataset oncqa --data-dir path/to/OncQA --output datasets/oncqa",
        help="write a Hub-ready dataset folder (data files + dataset card)",
        description="Prepares every config of a dataset (or --config ones) and writes "
        "FOLDER/README.md (a dataset card whose YAML names configs and splits) and "
        "FOLDER/data/<config>/<split>.<format>, so that datasets.load_dataset(FOLDER, "
        "config) loads it. Uploads nothing unless --push-to-hub is given.",
    )
    p.add_argument("name", help="dataset: " + ", ".join(BUILDER_NAMES))
    p.add_argument("--data-dir", type=Path, help="folder of the dataset's files")
    p.add_argument("--output", "-o", type=Path, required=True, help="folder to write")
    p.add_argument("--config", action="append", dest="configs", help="config to write (repeat)")
    p.add_argument(
        "--format",
        default="parquet",
        choices=["parquet", "jsonl"],
        help="format of the data files written (default %(default)s)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace the folder's data files")
    p.add_argument(
        "--card-only",
        action="store_true",
        help="write only README.md, the card as known without data (no counts)",
    )
    p.add_argument(
        "--push-to-hub",
        metavar="REPO_ID",
        help="then upload the folder to this Hub dataset repository, created private "
        "(network; refused for third-party sets and public repositories of patient data)",
    )
    _add_builder_options(p)
    p.set_defaults(run=_export_dataset)


def _export_dataset(args) -> int:
    """A failed export leaves the previous one whole; other files there and inputs are kept."""
    import datasets

    from editf1.builders.hub import (
        check_card_replaceable,
        check_export_folder,
        write_card,
        write_hub_folder,
    )
    from editf1.builders.push import check_pushable, push_to_hub
    from editf1.io import check_output_path, staged_folder

    datasets.disable_progress_bars()
    output = args.output
    check_output_path(output, "--output", folder=True)
    protect = [args.data_dir] if args.data_dir else []
    if args.data_dir:
        protect += [args.data_dir / name for name in args.export_file or []]
    if args.card_only:
        check_card_replaceable(output / "README.md", args.overwrite)  # other files are kept
        with staged_folder(output, protect=protect) as stage:
            write_card(args.name, stage, file_format=args.format, folder=str(output))
        print(f"wrote {output / 'README.md'}")
        return 0
    check_export_folder(output, args.overwrite)
    if args.push_to_hub:
        check_pushable(args.name)  # refused before anything is written
    kwargs = _builder_kwargs(args, args.name)
    with staged_folder(output, protect=protect) as stage:
        written = write_hub_folder(
            args.name,
            stage,
            configs=args.configs,
            file_format=args.format,
            cache_dir=args.cache_dir,
            **kwargs,
        )
    print(f"wrote {output / 'README.md'}")
    for config, counts in written.counts.items():
        listed = ", ".join(f"{split} {n}" for split, n in counts.items())
        print(f"  {config}: {listed} row(s) in {output / 'data' / config}")
    print(f'load with: datasets.load_dataset("{output}", "<config>")')
    if args.push_to_hub:
        url = push_to_hub(args.name, output, args.push_to_hub, private=True)
        print(f"uploaded to the private repository {args.push_to_hub}: {url}")
    return 0
