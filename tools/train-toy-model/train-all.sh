#!/bin/sh
# The whole pipeline of the bundled toy model, from seeds: corpus -> tokenizer -> three training stages -> export
# -> eval -> logits fixture. Reproduces public/models/toy-qwen3 (deterministic for these seeds, step counts and
# --threads 2). Needs Debian's python3-torch and python3-regex and the repository's node_modules.
#   sh tools/train-toy-model/train-all.sh
set -eu
PY=/usr/bin/python3
D=.tmp/toy
D2=.tmp/toy2
# Corpus (seed 1234) and tokenizer.
nice -n 19 $PY tools/train-toy-model/corpus.py --seed 1234 --train 16000 --out $D
npx tsx tools/train-toy-model/check-render.ts $D/train.jsonl
nice -n 19 $PY tools/train-toy-model/tokenizer.py --corpus $D/train.jsonl --vocab-size 2048 --out $D/vocab.json
# Stage 1: 1220 steps at a constant 5e-3 after warmup.
nice -n 19 $PY tools/train-toy-model/train.py --data $D --seed 1234 --steps 1220 --out main.pt
# Stage 2: cooldown, 300 steps, 3e-3 decayed linearly to 0.
nice -n 19 $PY tools/train-toy-model/train.py --data $D --seed 1235 --init $D/main.pt --decay --steps 300 --lr 3e-3 --warmup 5 --out cooldown.pt
# Stage 3: the same corpus seed with 60% of the values made up (same held-out set, same tokenizer), so the model
# copies values from the prompt instead of recalling the ones it has seen; 600 steps, 3e-3 decayed to 0.
nice -n 19 $PY tools/train-toy-model/corpus.py --seed 1234 --train 16000 --out $D2 --novel 0.6
cp $D/vocab.json $D2/vocab.json
nice -n 19 $PY tools/train-toy-model/train.py --data $D2 --seed 1236 --init $D/cooldown.pt --decay --steps 600 --lr 3e-3 --warmup 10 --out novel.pt
# Export, eval, fixture.
$PY tools/train-toy-model/export.py --data $D2 --checkpoint $D2/novel.pt --out public/models/toy-qwen3
npx tsx tools/train-toy-model/export.ts --vocab $D2/vocab.json --dir public/models/toy-qwen3 --catalog public/models/catalog.json --sample $D/tok-sample.jsonl
nice -n 19 $PY tools/train-toy-model/eval.py --data $D2 --safetensors public/models/toy-qwen3
nice -n 19 $PY tools/train-toy-model/logits_fixture.py --model public/models/toy-qwen3 --data $D2 --out test/unit/toy-model.fixture.json
