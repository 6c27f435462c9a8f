#!/bin/sh
# The whole pipeline of the bundled toy model, from a seed: corpus -> tokenizer -> training -> export -> eval.
#   sh tools/train-toy-model/train-all.sh [STEPS] [SEED]
# Needs Debian's python3-torch and python3-regex (apt-get install -y python3-torch python3-regex) and node_modules.
set -eu
STEPS=${1:-700}
SEED=${2:-1234}
PY=/usr/bin/python3
D=.tmp/toy
nice -n 19 $PY tools/train-toy-model/corpus.py --seed "$SEED" --train 16000 --out $D
npx tsx tools/train-toy-model/check-render.ts $D/train.jsonl
nice -n 19 $PY tools/train-toy-model/tokenizer.py --corpus $D/train.jsonl --vocab-size 2048 --out $D/vocab.json
nice -n 19 $PY tools/train-toy-model/train.py --data $D --seed "$SEED" --steps "$STEPS" | tee $D/train.log
$PY tools/train-toy-model/export.py --data $D --out public/models/toy-qwen3
npx tsx tools/train-toy-model/export.ts --vocab $D/vocab.json --dir public/models/toy-qwen3 --catalog public/models/catalog.json
nice -n 19 $PY tools/train-toy-model/eval.py --data $D
nice -n 19 $PY tools/train-toy-model/logits_fixture.py --model public/models/toy-qwen3 --data $D --out test/unit/toy-model.fixture.json
