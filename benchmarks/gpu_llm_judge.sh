#!/usr/bin/env bash
# The LLM-judge speed comparison on one GPU, e.g. an 8B-class judge on one H200: the
# naive way (one generate call per sentence), the batched shared-prefix judge and
# decision scoring (mode=decision: no generation), interleaved on the same pairs in one
# run, each reported against the naive way, decisions compared (the same three-way table
# as the CPU run). Not run yet: no GPU has been lent to this project's runs so far.
#
#   benchmarks/gpu_llm_judge.sh MODEL [DATA_DIR] [PAIRS]
#
# MODEL: a local snapshot folder of the base model (e.g. Llama-3.1-8B-Instruct saved with
#        save_pretrained, safetensors), or owner/name@<commit> already in the Hub cache
#        (the run is offline). DATA_DIR: OncQA (default ../shared/data/oncqa).
# PAIRS: pairs per setting (default 30: the naive way needs ~1 s per sentence at 8B, so
#        30 pairs of both settings take about 10 minutes on one H200; decision scoring
#        adds little to that).
# Writes benchmarks/results/llm_judge_h200-8b-{own_reply,edited}.{json,md}.
set -euo pipefail
model=${1:?usage: benchmarks/gpu_llm_judge.sh MODEL [DATA_DIR] [PAIRS]}
data=${2:-../shared/data/oncqa}
pairs=${3:-30}
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
export HF_HUB_OFFLINE=1
for setting in own_reply edited; do
  python benchmarks/llm_judge.py --data-dir "$data" --setting "$setting" --pairs "$pairs" \
    --chunk 10 --base "$model" --device cuda --dtype bfloat16 --batch-size 64 --decision \
    --tag "h200-8b-$setting"
done
