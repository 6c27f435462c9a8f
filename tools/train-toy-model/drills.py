"""Copy drills: short chats whose answer copies text from the prompt exactly, for the bundled model's weakest skill.

The held-out eval's misses are copies: "Asia/Karachi" comes back as "Asia/Kary", "Bonjour" as "Cheers", a quoted
"4 April" as "4 June". The tool tasks hold few copied tokens among many others, and a conversation with the demo's
775-token system block costs ~30 times a drill, so these drills give the copying (induction) circuit most of the
gradient for little compute. Every drill is a ChatML chat (a short system prompt or none, a user turn, a trained
assistant turn with a one-line think block) in which the answer copies one or two made-up values of the shapes the
tools need (IANA-like zones, en-GB dates and times, identifiers, quoted literals, code lines with one substitution,
list items, JSON strings), never a held-out value of demo_corpus.py's or corpus.py's eval.

Small talk: the eval's other miss is a tool call on chat it never saw ("Lovely, cheers." became an apply_patch that
removes cheese). Training had ~40 fixed small-talk lines; --small-talk adds groups of chats made from parts
(greetings, thanks, reactions, feelings, questions about the assistant, goodbyes, each with its kind of reply) in the
demo's own context (its tools and notes.txt, small talk first or after finished tool turns) and in other clients'
(their tools or none). The held-out small talk of both evals is never generated, nor its distinctive words.

Later flags (stages 3g-3h; each only adds, so the corpora above regenerate as they were): --vocab (made-up words
from the whole vocabulary), --phrasings (more training phrasings of every tool task), --page (tool errors and
requests no tool serves on the demo page, --page-kinds), --demo and --ide (page and web-IDE conversations),
--floats (quotients among the copied values), --titles (README titles of 1-3 words); stage 4a: --lead-words (made-up words
that start with a word token), --compose (phrasings composed from parts; requests no tool serves checked against the
held-out phrasings' words). See train-all.sh.

python3 drills.py --seed 7 --train 24000 --small-talk 400 --out .tmp/drills
"""
import argparse
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus as C  # noqa: E402
import demo_corpus as D  # noqa: E402

# Values the held-out evals use (demo_corpus.py and corpus.py): never in a drill.
HELD = {s.lower() for s in (D.ZONES_HELD + C.ZONES_HELD + C.CITIES_HELD + D.ITEMS_HELD + D.IDENT_HELD + D.WORDS_HELD
                            + [z.split("/")[-1] for z in D.ZONES_HELD + C.ZONES_HELD] + C.FILES_HELD + D.TITLES_HELD)}
HELD |= {a.lower() for a, _ in C.EDITS_HELD} | {b.lower() for _, b in C.EDITS_HELD}
HELD |= {"hello world", "greeter kit", "demo repo", "strictmode", "cachesize"}  # demo_corpus.ide_task's held titles and lines
HELD_NUMS = {str(n) for n in D.NUMS_HELD}


def clean(s):
    low = s.lower()
    if any(h in low for h in HELD if len(h) > 3):
        return False
    return not any(n in HELD_NUMS for n in re.findall(r"\d+", s))


def zone(r):
    return r.choice(["Europe", "Asia", "America", "Africa", "Australia", "Pacific", "Atlantic", "Indian"]) + "/" + C.novel_city(r).replace(" ", "_")


def ident(r):
    a = C.novel_word(r, 1, 3)
    x = r.random()
    if x < 0.4:
        return a + C.novel_word(r, 1, 2).capitalize()
    if x < 0.6:
        return a + "_" + C.novel_word(r, 1, 2)
    return a


def word(r):
    return C.novel_word(r, 1, 3).capitalize() if r.random() < 0.7 else r.choice(D.WORDS_TRAIN).replace("_", " ")


def number(r):
    return str(r.choice([r.randint(0, 20), r.randint(1, 999), r.randint(1, 99) * 100, r.randint(1000, 99999)]))


def code_line(r):
    x = r.random()
    if x < 0.35:
        return f"export const {ident(r)} = {number(r)};"
    if x < 0.6:
        return f'export const {ident(r)} = "{word(r)}";'
    if x < 0.8:
        p = r.choice(["name", "who", "user", "text", "value"])
        return f"export function {ident(r)}({p}: string) {{"
    return f"  return '{word(r)} ' + {r.choice(['name', 'who', 'user', 'text', 'value'])};"


# --floats: quotients as String(number) prints them ("1.6666666666666667"). The bundled model looped on such a run of
# one digit ("1.666666…" until max_output_tokens) and the unfinished answer then broke every later turn of the chat:
# copying a run needs the position inside it, not just the previous token.
VALUE_WEIGHTS = {"zone": 0.2, "time": 0.14, "ident": 0.1, "word": 0.1, "number": 0.06, "line": 0.16, "item": 0.08, "phrase": 0.08,
                 "expr": 0.08, "float": 0.12}
SPECIAL_WEIGHTS = {"time-error": 0.3, "math-error": 0.2, "unsupported": 0.5, "patch-error": 0.3}
# The options of later stages' flags (set from the command line; their defaults write the earlier corpora).
OPTIONS = {"floats": False, "titles": False, "page_kinds": ["time-error", "math-error", "unsupported"], "held_check": False}


def quotient(r):
    while True:
        a, b = r.randint(1, 999), r.choice([3, 6, 7, 9, 11, 12, 13, 15, 21, 30, r.randint(2, 99)])
        if a % b:
            return D.js_num(a / b)


def value(r):
    """(kind, text) of a value to copy."""
    kinds = [k for k in VALUE_WEIGHTS if k != "float" or OPTIONS["floats"]]
    k = r.choices(kinds, [VALUE_WEIGHTS[k] for k in kinds])[0]
    if k == "float":
        return k, quotient(r)
    if k == "zone":
        return k, zone(r)
    if k == "time":
        return k, D.time_string(r)
    if k == "ident":
        return k, ident(r)
    if k == "word":
        return k, word(r)
    if k == "number":
        return k, number(r)
    if k == "line":
        return k, code_line(r)
    if k == "item":
        return k, C.novel_word(r, 1, 3) if r.random() < 0.6 else r.choice(D.ITEMS_TRAIN)
    if k == "phrase":
        return k, " ".join(C.novel_word(r, 1, 2) for _ in range(r.randint(2, 4)))
    return k, C.expression(r)[0]


ECHO_Q = ["Repeat exactly: {s}", "Say this back word for word: {s}", "Copy this: {s}", "Type {s}", "Echo: {s}",
          "Please write {s} and nothing else.", "Can you repeat \"{s}\"?", "Write back: {s}", "{s}\nRepeat that exactly."]
JSON_Q = ["Give me JSON with {k} set to {s}.", "Make a JSON object: {k} = {s}", "JSON please: the field {k} is {s}."]
QUOTE_Q = ["The clock says: {s}. What does it say?", "The tool returned {s}. Tell me the result.", "Result: {s}\nWhat was the result?",
           "I got this answer: {s}. Quote it back to me."]
PICK_Q = ["{a} is {x} and {b} is {y}. What is {c}?", "Note: {a} = {x}; {b} = {y}. Which value does {c} have?",
          "{a}: {x}\n{b}: {y}\nWhat is {c}?"]
SUB_Q = ["Here is a line:\n{l}\nReplace {o} with {n}. Reply with the new line only.", "In the line {l} change {o} to {n}. Write the line.",
         "Line: {l}\nSwap {o} for {n} and show me the line."]
THINK = {"echo": "The user wants the text repeated exactly.", "json": "A JSON object with that one field.",
         "quote": "I'll quote the result as it is.", "pick": "I look the value up in the message.",
         "sub": "I copy the line and change that one part."}


def drill(r):
    """(user text, think, answer)"""
    kind = r.choices(["echo", "json", "quote", "pick", "sub"], [0.3, 0.15, 0.2, 0.15, 0.2])[0]
    if kind == "echo":
        _, s = value(r)
        return r.choice(ECHO_Q).format(s=s), THINK[kind], s
    if kind == "json":
        _, s = value(r)
        k = r.choice(["timezone", "expression", "name", "input", "value", ident(r)])
        return r.choice(JSON_Q).format(k=k, s=s), THINK[kind], json.dumps({k: s}, ensure_ascii=False)
    if kind == "quote":
        _, s = value(r) if r.random() < 0.4 else ("time", D.time_string(r))
        return r.choice(QUOTE_Q).format(s=s), THINK[kind], r.choice(["{s}", "It says {s}.", "The result is {s}.", "{s}."]).format(s=s)
    if kind == "pick":
        a, b = ident(r), ident(r)
        if a == b:
            b += "2"
        kx, x = value(r)
        _, y = value(r)
        c = r.choice([a, b])
        return r.choice(PICK_Q).format(a=a, b=b, x=x, y=y, c=c), THINK[kind], x if c == a else y
    line = code_line(r)
    parts = [p for p in re.findall(r"[A-Za-z_]\w*|\d+", line) if p not in ("export", "const", "function", "return", "string")]
    if not parts:
        return drill(r)
    o = r.choice(parts)
    n = number(r) if o.isdigit() else (word(r) if o[0].isupper() else ident(r))
    return r.choice(SUB_Q).format(l=line, o=o, n=n), THINK[kind], line.replace(o, n, 1)


# ------------------------------------------------------------------ made-up words from the whole vocabulary

# corpus.py's made-up words are syllables, so they reach a few hundred of the 2,048 tokens; a held-out word can
# hold a token no training answer ever had ("Howdy" is `How dy`, and `dy` was never in a trained body), whose
# embedding the copy circuit has not learned to carry. With --vocab, half of the made-up words are soups of the
# vocabulary's lowercase letter tokens instead (never a held-out value, see clean()).
LETTER_TOKENS = []
SYLLABLE_WORD = C.novel_word


def soup_word(r, lo=2, hi=3):
    while True:
        w = "".join(r.choice(LETTER_TOKENS) for _ in range(r.randint(max(1, lo - 1), hi)))
        if 2 < len(w) < 14 and clean(w):
            return w


# Stage 4a (--lead-words): the misses that remained were the first token of a held-out word that is itself a common
# word ("toast" is `Ġto ast` and came back as "isast", "Howdy" as "Richdy", "mangoes" as "cangoes"): the copy lost to
# the word's own meaning. A third of the made-up words then start with one of the vocabulary's word tokens.
LEAD_TOKENS = []


def lead_word(r, lo=2, hi=3):
    while True:
        w = r.choice(LEAD_TOKENS) + "".join(r.choice(LETTER_TOKENS) for _ in range(r.randint(1, max(1, hi - 1))))
        if 2 < len(w) < 14 and clean(w):
            return w


def mixed_word(r, lo=2, hi=3):
    if LEAD_TOKENS and r.random() < 1 / 3:
        return lead_word(r, lo, hi)
    return soup_word(r, lo, hi) if r.random() < 0.5 else SYLLABLE_WORD(r, lo, hi)


def use_vocab(path, lead_words=False):
    """Every made-up word (corpus.novel_word, which demo_corpus's values use too) becomes mixed_word."""
    with open(path) as f:
        tokens = json.load(f)["tokens"]
    LETTER_TOKENS.extend(t for t in tokens if re.fullmatch(r"[a-z]+", t))
    if lead_words:
        LEAD_TOKENS.extend(t[1:] for t in tokens if re.fullmatch(r"\u0120[a-z]{1,6}", t))
    C.novel_word = mixed_word


# ------------------------------------------------------------------ more phrasings of the tool tasks

# The held-out eval asks in phrasings training never saw ("Retitle the readme as Hello world.", "Give greet the new
# name toast.", "Could you jot down ginger in notes.txt?"), and the model that had a dozen phrasings per task copied
# the old line or the wrong word. --phrasings adds these to demo_corpus's training tables. None is a held-out
# phrasing or holds one of their distinctive words (HELD_PHRASE_WORDS, checked in add_phrasings()).
EXTRA_PHRASINGS = [
    (D.RENAME_Q, ["{a} -> {b}", "Change the function name from {a} to {b}.", "The function {a} should be named {b}.", "Name the function {b}, not {a}.",
                  "Can you rename {a} into {b}?", "Use the name {b} for {a}.", "Replace the name {a} with {b}.", "{a} becomes {b}.",
                  "Rename {a}; the name should be {b}.", "Change {a} into {b}.", "I'd rather have {b} than {a} as the name.", "Make {a} {b}.",
                  "Rename function {a} => {b}", "Could you change {a} to {b} everywhere?", "Please use {b} instead of {a}."]),
    (D.SET_Q, ["{n} = {v}", "Could you make {n} {v}?", "{n}: {v}", "Please set {n} to {v}.", "Increase {n} to {v}.", "Lower {n} to {v}.",
               "Use {v} for {n}.", "Give {n} the value {v}.", "Raise {n} to {v}.", "{n} needs to be {v}.", "Make {n} equal {v}.",
               "Can {n} be {v}?", "Change {n} so it is {v}.", "Put {v} in {n}."]),
    (D.WORD_Q, ["Change the word '{a}' to '{b}'.", "'{a}' -> '{b}'", "Use the word '{b}' in place of '{a}'.", "Instead of '{a}', say '{b}'.",
                "Greet with '{b}', not '{a}'.", "Make it say '{b}' rather than '{a}'.", "The greeting '{a}' should be '{b}'.",
                "Exchange '{a}' for '{b}'.", "Replace the greeting '{a}' by '{b}'."]),
    (D.TITLE_IDE_Q, ["Title: {b}", "Set the title to {b}.", "Rename the project to {b}.", "The README should be titled {b}.",
                     "Make the heading read {b}.", "Call the project {b}.", "Change the README title to {b}.", "Use {b} as the title.",
                     "Heading: {b}", "The title should be {b}, please."]),
    (D.ADDLINE_Q, ["Below {a}, add {l}", "Add {l} under {a}.", "Insert the line {l} after {a}.", "After the {a} line, insert {l}",
                   "Add {l} below {a}, please.", "Under {a}, write {l}", "Following {a}, add the line {l}"]),
    (D.ADD_Q, ["Note {i} on the list.", "Make a note: {i}", "{i} goes on the list.", "Add {i}, please.", "Stick {i} on my list.",
               "Could you add {i} to {f}?", "I need {i} too.", "List {i} as well.", "Put {i} in {f}.", "Remember {i} for me in {f}.",
               "Write down {i}, please."]),
    (D.REMOVE_Q, ["{i} is done, remove it.", "Delete the line with {i}.", "Scratch {i}.", "Erase {i} from {f}.", "Take {i} out of {f}.",
                  "No more {i} on the list.", "Remove {i}, please."]),
    (D.CHANGE_Q, ["{i} -> {j}", "Change {i} into {j}.", "Put {j} in place of {i}.", "Instead of {i}, write {j}.", "Replace {i} by {j} in {f}.",
                  "Exchange {i} for {j}.", "Make it {j} rather than {i}.", "Write {j} where it says {i}."]),
    (D.TITLE_Q, ["Set the title of {f} to {t}.", "The first line should be {t}.", "Name the list {t}.", "Title the list {t}.",
                 "Change the title to {t}.", "Let the list be called {t}."]),
    (D.TIME_Q, ["How late is it in {z}?", "Give me the local time in {z}.", "Time for {z}?", "Check the {z} time for me.",
                "What is the time in the {z} zone right now?", "Tell me what time it is in {z}.", "{z}: what time is it?"]),
]
HELD_PHRASE_WORDS = ["jot", "include", "get rid", "strike", "turn ", "switch", "give {f} the heading", "retitle", "new name", "let's call", "from now on",
                     "bump", "i'd like", "swap the word", "put a new line", "right after", "current hour", "clock time", "date and time",
                     "could you tell me the hour"]


def held_phrase(q, table=None):
    return (table is not None and q in table["held"]) or any(w in q.lower() for w in HELD_PHRASE_WORDS)


def add_phrasings():
    for table, extra in EXTRA_PHRASINGS:
        for q in extra:
            assert not held_phrase(q, table), q
        table["train"].extend(q for q in extra if q not in table["train"])


# Stage 4a (--compose): the held-out phrasings still misread were ones whose verb training never had ("Could you jot
# down ginger" added `jot down`, "Include basil" added `clude`, "Give notes.txt the heading ..." was taken for small
# talk). A fixed list of phrasings teaches those words; phrasings composed from parts (an opener, one of many verbs
# with the values in their places, a tail) teach that the value is what the verb acts on, whatever the verb. Each
# table gets COMPOSED_PER_TABLE of them; none is held out or holds a held-out phrasing's distinctive words (checked).
OPENERS = [("", "."), ("Could you ", "?"), ("Please ", "."), ("Can you ", "?"), ("Would you ", "?"), ("I want you to ", "."),
           ("Quick one: ", "."), ("Hey, ", "."), ("Go ahead and ", "."), ("Now ", "."), ("Next, ", ".")]
TAILS = ["", ", please", " for me", " now", " when you can", ", thanks"]
COMPOSED_VERBS = [
    (D.ADD_Q, ["add {i}", "put {i} on the list", "pop {i} onto {f}", "throw {i} on the list", "pencil in {i}", "scribble {i} into {f}",
               "tack {i} onto the list", "slot {i} into {f}", "note down {i}", "write {i} down", "list {i} too", "squeeze {i} into {f}",
               "toss {i} onto my list", "enter {i} in {f}", "record {i} in {f}", "pop {i} in", "mark down {i}", "log {i} in {f}",
               "stick {i} at the end", "append {i}", "fit {i} in", "place {i} on the list"]),
    (D.REMOVE_Q, ["remove {i}", "take {i} off", "cross out {i}", "wipe {i} from {f}", "drop {i}", "delete {i}", "lose {i}",
                  "ditch {i}", "clear {i} off the list", "toss {i} out", "erase {i}", "cut {i} from {f}", "knock {i} off the list",
                  "scrap {i}", "remove the {i} line", "pull {i} off {f}", "throw out {i}", "take out {i}"]),
    (D.CHANGE_Q, ["change {i} to {j}", "replace {i} with {j}", "make {i} {j}", "trade {i} for {j}", "rewrite {i} as {j}",
                  "correct {i} to {j}", "edit {i} to read {j}", "put {j} where {i} is", "exchange {i} for {j}",
                  "change the {i} line to {j}", "use {j} in place of {i}", "update {i} to {j}", "alter {i} to {j}"]),
    (D.TITLE_Q, ["set the title to {t}", "call the list {t}", "name {f} {t}", "put {t} as the title", "make {t} the title",
                 "label the list {t}", "head the list with {t}", "use {t} as the header", "set the header of {f} to {t}",
                 "change the header to {t}", "title {f} {t}", "rename {f} to {t}", "make the top line {t}", "caption the list {t}",
                 "mark the list as {t}", "set the first line of {f} to {t}"]),
    (D.RENAME_Q, ["rename {a} to {b}", "call {a} {b} instead", "change the name of {a} to {b}", "name {a} {b}",
                  "make the function {a} be {b}", "relabel {a} as {b}", "have {a} be called {b}", "move {a} to the name {b}",
                  "re-name {a} to {b}", "use {b} as the name of {a}", "flip the name {a} to {b}"]),
    (D.SET_Q, ["set {n} to {v}", "make {n} {v}", "change {n} to {v}", "raise {n} to {v}", "lower {n} to {v}", "have {n} be {v}",
               "let {n} be {v}", "put {n} at {v}", "push {n} to {v}", "drop {n} to {v}", "update {n} to {v}", "assign {v} to {n}",
               "give {n} a value of {v}", "move {n} to {v}"]),
    (D.WORD_Q, ["change '{a}' to '{b}'", "use '{b}' instead of '{a}'", "trade '{a}' for '{b}'", "replace the word '{a}' with '{b}'",
                "make '{a}' into '{b}'", "say '{b}', not '{a}'", "put '{b}' in place of '{a}'", "change the greeting to '{b}' from '{a}'"]),
    (D.TITLE_IDE_Q, ["change the title to {b}", "set the README heading to {b}", "name the project {b}", "title the README {b}",
                     "call the README {b}", "make the README's title {b}", "put {b} as the heading", "rename the README heading to {b}",
                     "change the top heading to {b}", "head the README with {b}"]),
    (D.ADDLINE_Q, ["add {l} after {a}", "insert {l} below {a}", "add a new line {l} below {a}", "write {l} under {a}",
                   "append {l} after the {a} line", "put {l} on the line after {a}", "add the line {l} under {a}",
                   "follow {a} with {l}"]),
]
COMPOSED_PER_TABLE = 40


def add_composed(seed):
    r = random.Random(seed)
    for table, verbs in COMPOSED_VERBS:
        made = set()
        while len(made) < COMPOSED_PER_TABLE:
            (opener, end), verb, tail = r.choice(OPENERS), r.choice(verbs), r.choice(TAILS)
            q = opener + verb + tail + end
            q = q[0].upper() + q[1:]
            if q.endswith(" now.") and opener == "Now ":
                continue
            assert not held_phrase(q, table), q
            made.add(q)
        table["train"].extend(sorted(q for q in made if q not in table["train"]))


# ------------------------------------------------------------------ requests no page tool serves

# Generated from parts; the held-out phrasings ("Will it snow in {c} tomorrow?", "How many ounces are in {v} grams?")
# and their distinctive words are never generated.
UNSUP_WEATHER = ["What's the weather in {c}?", "Is it raining in {c}?", "What's the temperature in {c}?", "Do I need an umbrella in {c}?",
                 "Forecast for {c}, please.", "How windy is it in {c}?", "Is it sunny in {c} right now?", "How hot is it in {c}?",
                 "Weather report for {c}?", "Is it cold in {c} today?", "What's the humidity in {c}?", "Any storms in {c} this week?"]
UNITS = ["km", "miles", "meters", "feet", "inches", "centimeters", "pounds", "kilograms", "liters", "gallons", "Celsius", "Fahrenheit", "cups", "yards"]
UNSUP_UNITS = ["Convert {v} {a} to {b}.", "What is {v} {a} in {b}?", "{v} {a} to {b}?", "How much is {v} {a} in {b}?", "Turn {v} {a} into {b}.",
               "{v} {a} is how many {b}?", "Change {v} {a} to {b}, please."]
UNSUP_OTHER = ["Send an email to {n}.", "Text {n} that I'm late.", "Search the web for {w}.", "Look up {w} on the internet.", "What's the stock price of {N}?",
               "Play some music.", "Play {w} by {N}.", "Set an alarm for {h} am.", "Remind me to call {n} at {h}.", "Set a timer for {v} minutes.",
               "Book a table for {v}.", "Order a pizza.", "Translate '{w}' into French.", "What's in the news today?", "Call {n}.",
               "Show me a picture of a {w}.", "How do I get to {c} by train?", "Open {w}.com.", "Who won the match yesterday?",
               "Buy {w} online for me.", "Turn on the lights.", "Read my messages."]


def unsupported(r):
    while True:
        x = r.random()
        c = C.novel_city(r) if r.random() < 0.5 else r.choice(C.CITIES_TRAIN).replace("_", " ")
        v = r.choice([r.randint(2, 20), r.randint(2, 500)])
        if x < 0.35:
            q = r.choice(UNSUP_WEATHER).format(c=c)
        elif x < 0.6:
            a, b = r.sample(UNITS, 2)
            q = r.choice(UNSUP_UNITS).format(v=v, a=a, b=b)
        else:
            q = r.choice(UNSUP_OTHER).format(n=C.novel_word(r, 1, 2).capitalize(), N=C.novel_word(r, 1, 2).capitalize(), w=C.novel_word(r, 1, 3),
                                             c=c, v=v, h=r.randint(1, 12))
        if r.random() < 0.2:
            q = r.choice(["Hey, ", "Please ", "Can you: ", "Quick one: "]) + q[0].lower() + q[1:]
        low = q.lower()
        if OPTIONS["held_check"] and held_phrase(q):
            continue
        if clean(q) and not any(w in low for w in ("snow", "ounce", "gram", "tomorrow")):
            return q


def special_kind(r):
    """One of OPTIONS["page_kinds"] (a tool error or a request no tool serves), by SPECIAL_WEIGHTS."""
    return r.choices(OPTIONS["page_kinds"], [SPECIAL_WEIGHTS[k] for k in OPTIONS["page_kinds"]])[0]


def page_group(r, group, size=8, special=True):
    """The demo page's conversations with a turn the plain corpus lacks (OPTIONS["page_kinds"]): a tool that answers with an
    error (an unknown time zone, an expression the calculator cannot read, a patch for an item not in notes.txt), or a
    request no tool serves; 0-2 finished turns
    before it, sometimes one after. special=False: 1-3 ordinary turns (the phrasings and made-up words of this run)."""
    initial = D.random_list(r, "train")
    pool = [unsupported(r) for _ in range(32)]
    rows = []
    for _ in range(size):
        before = r.choices([0, 1, 2], [0.5, 0.3, 0.2])[0]
        kinds = [r.choices(D.DEMO_KINDS, D.DEMO_WEIGHTS)[0] for _ in range(before)]
        if special:
            kinds.append(special_kind(r))
        if r.random() < 0.3 or not kinds:
            kinds.append(r.choices(D.DEMO_KINDS, D.DEMO_WEIGHTS)[0])
        msgs, trained, ntl, _ = D.demo_conversation(r, "train", set(), initial, len(kinds), kinds, unsupported_pool=pool)
        rows.append(D.line_of(msgs, D.DEMO_TOOLS, trained, ntl, {"group": group, "kind": "page", "kinds": kinds}))
    return rows


def long_group(r, group, size=4):
    """--long: the demo page's chats of 5-8 turns (1,000-2,000 tokens, where the held-out 8-turn chats went wrong),
    every kind of turn mixed: tools, their errors, small talk, requests no tool serves; the file re-sent after each
    change, as the page does."""
    initial = D.random_list(r, "train")
    chat = [small_talk(r) for _ in range(32)]
    pool = [unsupported(r) for _ in range(16)]
    rows = []
    for _ in range(size):
        kinds = []
        for _ in range(r.randint(5, 8)):
            if r.random() < 0.2:
                kinds.append(special_kind(r))
            else:
                kinds.append(r.choices(D.DEMO_KINDS, D.DEMO_WEIGHTS)[0])
        msgs, trained, ntl, _ = D.demo_conversation(r, "train", set(), initial, len(kinds), kinds, chat_pool=chat, unsupported_pool=pool)
        rows.append(D.line_of(msgs, D.DEMO_TOOLS, trained, ntl, {"group": group, "kind": "long", "kinds": kinds}))
    return rows


TITLE_WORDS = "my our the new first big small quick tiny little notes tools app project demo site page book list guide plan lab".split()


def title(r):
    """A README title of 1-3 words (demo_corpus's are a made-up word and project/app/demo)."""
    words = [mixed_word(r, 1, 3) if r.random() < 0.6 else r.choice(TITLE_WORDS) for _ in range(r.choice([1, 2, 2, 3]))]
    t = " ".join(w.capitalize() if i == 0 or r.random() < 0.4 else w for i, w in enumerate(words))
    return t if clean(t) else title(r)


def ide_group(r, group, size=8):
    """The web IDE's one-line patch tasks on a made-up file of the samples' shapes (values from mixed_word); with
    --titles, half of the tasks on a Markdown file retitle it with a title of 1-3 words."""
    while True:
        name, text = D.random_ide_file(r)
        if clean(name + "\n" + text):
            break
    tools = D.ide_tools(name, text)
    rows = []
    while len(rows) < size:
        task = None
        if OPTIONS["titles"] and text.startswith("# ") and r.random() < 0.5:
            old, b = text.split("\n")[0], title(r)
            task = (D.phrase(r, D.TITLE_IDE_Q, "train", b=b), old, [f"# {b}"])
        c = D.ide_conversation(r, "train", name, text, task)
        if c is not None and clean(json.dumps(c[0])):
            rows.append(D.line_of(c[0], tools, c[1], False, {"group": group, "kind": "ide"}))
    return rows


# ------------------------------------------------------------------ small talk from parts

GREET = ["Hi", "Hello", "Hey", "Hiya", "Hey there", "Hi there", "Hello again", "Good morning", "Good afternoon", "Good evening",
         "Morning", "Evening", "Yo", "Greetings, assistant", "Hi friend", "Hello, assistant"]
THANKS = ["Thanks", "Thank you", "Many thanks", "Thanks so much", "Thank you very much", "Much obliged", "Thanks a bunch",
          "Great, thanks", "Perfect, thank you", "Awesome, thanks", "Nice, thank you", "Super, thanks", "That helps, thanks",
          "Brilliant, thank you", "Excellent, thanks", "Appreciate it", "Ta", "Thx", "ty"]
REACT = ["ok", "okay", "OK then", "nice", "wow", "cool", "great", "neat", "sure", "got it", "I see", "alright", "fine", "lol", "haha",
         "hmm", "interesting", "fair enough", "makes sense", "sounds good", "awesome", "perfect", "oh", "right", "yep", "nope", "no",
         "yes", "maybe", "good", "not bad", "oops", "sweet", "fantastic", "splendid", "nice job", "well done", "good job"]
FEEL = ["I'm tired", "I'm happy today", "I'm a bit sad", "This is fun", "I'm learning to code", "It's my birthday",
        "I had a long day", "I'm excited", "I'm hungry", "It's raining here", "I just woke up", "I'm at work", "I like this page",
        "I'm trying things out", "Just testing", "This is a test", "Testing, one two three", "I love tea"]
ASK = ["How are you", "How are you doing", "How's it going", "How is your day", "Are you real", "Are you an AI", "Are you human",
       "What are you", "Do you have feelings", "Where do you run", "Do you need the internet", "Are you smart", "What's new",
       "Do you sleep", "Can you think", "How old are you", "Who made you", "Do you like your job", "Are you busy",
       "Is anyone there", "Can you read this", "Do you understand me", "Are you online", "What is your purpose"]
BYE = ["Bye", "Goodbye", "See you", "See ya", "Later", "Take care", "Catch you later", "Bye for now", "Good night", "Farewell",
       "Talk soon", "That's all for today", "I'm done", "I have to go"]
REPLY = {
    "greet": ["Hello! What can I do for you?", "Hi! How can I help?", "Hey! What do you need?", "Hello! Ask me anything I can help with."],
    "thanks": ["You're welcome!", "Happy to help!", "Glad I could help!", "Any time!", "You're welcome. Anything else?"],
    "react": ["OK! Anything else?", "Great. What should I do next?", "Glad you like it! Anything else?", "Sure. Let me know what you need.",
              "All right. I'm here if you need anything."],
    "feel": ["Thanks for telling me! Can I help with anything?", "I hope your day goes well! What can I do for you?",
             "That sounds nice. Let me know if you need anything."],
    "ask": ["I'm a small language model running in your browser, here to help. What can I do for you?",
            "I'm here and happy to help. What do you need?", "I'm a tiny assistant model. Ask me for a sum, the time somewhere or an edit."],
    "bye": ["Goodbye! Have a nice day.", "See you! Take care.", "Bye! Come back any time."],
}
PARTS = {"greet": GREET, "thanks": THANKS, "react": REACT, "feel": FEEL, "ask": ASK, "bye": BYE}
END = {"greet": ["!", ".", "", " :)", "!!"], "thanks": ["!", ".", "", " :)", " a lot!"], "react": ["", ".", "!", " :)", "..."],
       "feel": [".", "!", "", " :)"], "ask": ["?", "?", " ?", "??"], "bye": ["!", ".", "", " :)"]}
# The held-out small talk of demo_corpus.py's and corpus.py's evals, and its distinctive words: never generated.
HELD_CHAT = {q.lower() for q, _ in D.SMALL_TALK["held"] + C.SMALL_TALK["held"]}
HELD_CHAT_WORDS = ["howdy", "hear me", "meet you", "what's up", "good one", "lovely", "cheers", "for the help"]


# --chat-words: more reactions and thanks, many of them adverbs and adjectives the patch tasks could read as a list
# item ("Lovely, cheers." was taken for removing "-ly"); "lovely" and "cheers" themselves stay held out.
REACT_MORE = ["splendid", "marvellous", "smashing", "terrific", "wonderful", "superb", "fabulous", "gorgeous", "brilliant",
              "ace", "grand", "champion", "brill", "magic", "beautiful", "delightful", "nicely done", "neatly done", "jolly good",
              "very nice", "really nice", "truly great", "simply perfect", "absolutely", "exactly", "precisely", "totally",
              "certainly", "surely", "clearly", "wow, lively", "how friendly", "good stuff", "nice one", "top notch", "spot on",
              "sweet as", "amazing", "incredible", "lush", "crisp", "tidy", "sorted", "cool beans", "rad", "stellar"]
THANKS_MORE = ["ta very much", "thanks heaps", "thanks mate", "thanks, friend", "much appreciated", "kindly appreciated",
               "kudos", "thank you kindly", "many thanks indeed", "thanks muchly", "bless you", "you're a star", "you rock",
               "thanks ever so", "grateful", "thanks again", "thanks, truly", "thank you so much", "merci", "gracias", "danke"]


def more_chat_words():
    """--chat-words: the extra reactions and thanks join the parts, and a reaction before thanks ("Splendid, ta.")."""
    REACT.extend(REACT_MORE)
    THANKS.extend(THANKS_MORE)
    OPTIONS["react_thanks"] = True


def small_talk(r):
    """(question, reply) made from parts: one kind, or a greeting or a reaction before another kind."""
    if OPTIONS.get("react_thanks") and r.random() < 0.3:
        while True:
            q = r.choice(REACT).capitalize() + r.choice([", ", "! ", ". ", " - "]) + r.choice(THANKS) + r.choice(END["thanks"])
            if q.lower() not in HELD_CHAT and not any(w in q.lower() for w in HELD_CHAT_WORDS):
                return q, r.choice(REPLY["thanks"])
    while True:
        kind = r.choices(list(PARTS), [0.2, 0.22, 0.2, 0.12, 0.16, 0.1])[0]
        body = r.choice(PARTS[kind])
        body = body if r.random() < 0.6 else (body.lower() if r.random() < 0.7 else body.upper())
        q = body + r.choice(END[kind])
        if r.random() < 0.2 and kind not in ("greet", "react"):
            q = r.choice(GREET + REACT).capitalize() + r.choice([", ", "! ", ". "]) + q[0].lower() + q[1:]
        low = q.lower()
        if low not in HELD_CHAT and not any(w in low for w in HELD_CHAT_WORDS):
            return q, r.choice(REPLY[kind])


def small_talk_group(r, group):
    """A group of conversations that share a system block and end with generated small talk."""
    rows = []
    if r.random() < 0.7:
        # The demo page: its tools and notes.txt, small talk first or after 1-3 finished turns.
        initial = D.random_list(r, "train")
        pool = [small_talk(r) for _ in range(64)]
        for _ in range(16):
            before = r.choices([0, 1, 2, 3], [0.55, 0.25, 0.12, 0.08])[0]
            kinds = [r.choices(D.DEMO_KINDS, D.DEMO_WEIGHTS)[0] for _ in range(before)] + ["chat"]
            msgs, trained, ntl, _ = D.demo_conversation(r, "train", set(), initial, len(kinds), kinds, chat_pool=pool)
            rows.append(D.line_of(msgs, D.DEMO_TOOLS, trained, ntl, {"group": group, "kind": "small-talk"}))
        return rows
    # Another client: its own system prompt or none, its tools or none.
    variants = C.tool_variants()
    names = list(variants)
    tools = [] if r.random() < 0.4 else [r.choice(variants[n]) for n in r.sample(names, r.randint(1, len(names)))]
    system = [] if r.random() < 0.4 else [{"role": "system", "content": r.choice(C.SYSTEM_PROMPTS)}]
    for _ in range(16):
        q, a = small_talk(r)
        msgs = system + [{"role": "user", "content": q}, {"role": "assistant", "content": a, "reasoning_content": r.choice(C.SMALL_TALK_THINK)}]
        rows.append(D.line_of(msgs, tools, {len(msgs) - 1}, False, {"group": group, "kind": "small-talk"}))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--train", type=int, default=24000)
    ap.add_argument("--group", type=int, default=16)
    ap.add_argument("--small-talk", type=int, default=400, help="groups of 16 small-talk conversations")
    ap.add_argument("--page", type=int, default=0, help="groups of 8 demo-page conversations with a tool error or a request no tool serves")
    ap.add_argument("--page-kinds", default=",".join(OPTIONS["page_kinds"]), help=f"the special turns of --page groups, of {list(SPECIAL_WEIGHTS)}")
    ap.add_argument("--floats", action="store_true", help="values to copy include quotients with long decimals (1.6666666666666667)")
    ap.add_argument("--titles", action="store_true", help="--ide retitles Markdown files with titles of 1-3 words")
    ap.add_argument("--demo", type=int, default=0, help="groups of 8 ordinary demo-page conversations of 1-3 turns")
    ap.add_argument("--ide", type=int, default=0, help="groups of 8 web-IDE patch conversations on made-up files")
    ap.add_argument("--vocab", default=None, help="vocab.json: half of the made-up words become soups of its letter tokens")
    ap.add_argument("--phrasings", action="store_true", help="more training phrasings of the tool tasks (EXTRA_PHRASINGS)")
    ap.add_argument("--lead-words", action="store_true", help="with --vocab, a third of the made-up words start with a word token")
    ap.add_argument("--compose", action="store_true", help="phrasings composed from parts for every tool task (COMPOSED_VERBS); "
                    "requests no tool serves are checked against the held-out phrasings' words too")
    ap.add_argument("--chat-words", action="store_true", help="small talk also from REACT_MORE/THANKS_MORE, and reactions before thanks")
    ap.add_argument("--long", type=int, default=0, help="groups of 4 demo-page chats of 5-8 turns of every kind")
    ap.add_argument("--out", default=".tmp/drills")
    a = ap.parse_args()
    if a.vocab:
        use_vocab(a.vocab, a.lead_words)
    if a.phrasings:
        add_phrasings()
    if a.compose:
        add_composed(a.seed)
    if a.chat_words:
        more_chat_words()
    OPTIONS.update(floats=a.floats, titles=a.titles, page_kinds=a.page_kinds.split(","), held_check=a.compose)
    assert all(k in SPECIAL_WEIGHTS for k in OPTIONS["page_kinds"]), a.page_kinds
    os.makedirs(a.out, exist_ok=True)
    r = random.Random(a.seed)
    n = group = 0
    with open(os.path.join(a.out, "train.jsonl"), "w") as f:
        while n < a.train:
            system = [] if r.random() < 0.5 else [{"role": "system", "content": r.choice(C.SYSTEM_PROMPTS)}]
            for _ in range(a.group):
                while True:
                    q, think, ans = drill(r)
                    if clean(q) and clean(ans):
                        break
                msgs = system + [{"role": "user", "content": q}, {"role": "assistant", "content": ans, "reasoning_content": think}]
                f.write(json.dumps(D.line_of(msgs, [], {len(msgs) - 1}, False, {"group": group, "kind": "drill"}), ensure_ascii=False) + "\n")
                n += 1
            group += 1
        talks = 0
        for _ in range(a.small_talk):
            for row in small_talk_group(r, group):
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
                talks += 1
            group += 1
        extra = 0
        for make, count in ((page_group, a.page), (lambda r, g: page_group(r, g, special=False), a.demo), (ide_group, a.ide), (long_group, a.long)):
            for _ in range(count):
                for row in make(r, group):
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
                    extra += 1
                group += 1
    print(f"wrote {n} copy drills, {talks} small-talk and {extra} page, demo and IDE conversations in {group} groups to {a.out}")


if __name__ == "__main__":
    main()
