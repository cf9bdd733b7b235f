#!/usr/bin/env bash
# Does the memory work, with a real model? A long run of a fixed world, then the recall
# probe under every memory configuration (README: "Does the memory work?").
#
#   scripts/probe.sh local                       # the embedded model
#   scripts/probe.sh http://gpu1:11434 qwen3:4b  # an Ollama server and a model
#   TURNS=600 VAULT=/tmp/v scripts/probe.sh ...  # 600 turns per agent (default 200)
set -euo pipefail
llm=${1:?usage: scripts/probe.sh URL|local [MODEL]}
model=${2:-}
turns=${TURNS:-200}
vault=${VAULT:-$(mktemp -d)/vault}
model_args=()
if [ -n "$model" ]; then model_args=(--model "$model"); fi
mudsim run worlds/village.yaml --vault "$vault" --headless --turns "$turns" --seed 7 \
  --llm "$llm" "${model_args[@]}"
mudsim probe --vault "$vault" --compare full,waterfall,gapped,window,none --per-category 10 \
  --llm "$llm" "${model_args[@]}"
echo "The report, answers and chart: $vault/probes/"
