#!/usr/bin/env bash
# Does the memory work, with a real model? A long run of a fixed world, then the recall
# probe under every memory configuration, with the reader's ceiling (`evidence`), the
# baselines and the paired tests (README: "Does the memory work?"). The table it prints
# is the README's; the report (report.json: baselines, paired, ceiling, verdict, and the
# model, endpoints, num_ctx, seed and question set's hash) is in $VAULT/probes/.
#
#   scripts/probe.sh local                       # the embedded model
#   scripts/probe.sh http://gpu1:11434 qwen3:4b  # an Ollama server and a model
#   TURNS=600 PER_CATEGORY=100 VAULT=/tmp/v scripts/probe.sh ...   # defaults: 200 and 40
set -euo pipefail
llm=${1:?usage: scripts/probe.sh URL|local [MODEL]}
model=${2:-}
turns=${TURNS:-200}
per_category=${PER_CATEGORY:-40}
vault=${VAULT:-$(mktemp -d)/vault}
model_args=()
if [ -n "$model" ]; then model_args=(--model "$model"); fi
mudsim run worlds/village.yaml --vault "$vault" --headless --turns "$turns" --seed 7 \
  --llm "$llm" "${model_args[@]}"
mudsim probe --vault "$vault" --compare full,full+query,waterfall,gapped,window,none \
  --per-category "$per_category" --seed 7 --llm "$llm" "${model_args[@]}"
echo "The report, answers and chart: $vault/probes/"
