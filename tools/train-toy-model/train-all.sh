#!/bin/sh
# The whole pipeline of the bundled toy model, from seeds: corpus -> tokenizer -> training -> export -> eval ->
# logits fixture. Reproduces public/models/toy-qwen3 (deterministic for these seeds, the step count and
# --threads 2). Needs Debian's python3-torch and python3-regex and the repository's node_modules.
#   sh tools/train-toy-model/train-all.sh
set -eu
PY=/usr/bin/python3
D=${D:-.tmp/toy}
# Corpus (seed 1234): half of the training values (cities, zones, files, edits; some units) made up, so that the
# model learns to copy values from the prompt rather than recall the ones it has seen; then the tokenizer.
nice -n 19 $PY tools/train-toy-model/corpus.py --seed 1234 --train 24000 --novel 0.5 --out $D
npx tsx tools/train-toy-model/check-render.ts $D/train.jsonl
nice -n 19 $PY tools/train-toy-model/tokenizer.py --corpus $D/train.jsonl --vocab-size 2048 --out $D/vocab.json
# One stage: 2800 steps (groups of 8 conversations), 20 warmup steps, then 5e-3 decayed linearly to 0.
nice -n 19 $PY tools/train-toy-model/train.py --data $D --seed 1234 --steps 2800 --decay --out model.pt
# Export, eval, fixture.
$PY tools/train-toy-model/export.py --data $D --checkpoint $D/model.pt --out public/models/toy-qwen3
npx tsx tools/train-toy-model/export.ts --vocab $D/vocab.json --dir public/models/toy-qwen3 --catalog public/models/catalog.json --sample $D/tok-sample.jsonl
nice -n 19 $PY tools/train-toy-model/eval.py --data $D --safetensors public/models/toy-qwen3
nice -n 19 $PY tools/train-toy-model/logits_fixture.py --model public/models/toy-qwen3 --data $D --out test/unit/toy-model.fixture.json
