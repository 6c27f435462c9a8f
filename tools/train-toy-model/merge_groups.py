"""Concatenate corpora (train.jsonl files) into one, renumbering each file's groups after the previous file's.

python3 merge_groups.py a/train.jsonl b/train.jsonl [...] out/train.jsonl
"""
import json
import sys


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    base = 0
    with open(sys.argv[-1], "w") as out:
        for path in sys.argv[1:-1]:
            top = -1
            with open(path) as f:
                for line in f:
                    c = json.loads(line)
                    top = max(top, c["group"])
                    c["group"] += base
                    out.write(json.dumps(c, ensure_ascii=False) + "\n")
            base += top + 1


if __name__ == "__main__":
    main()
