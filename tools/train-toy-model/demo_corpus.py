"""Synthetic chats on exactly the tools the demo page and the web-IDE example offer, rendered as the runtime
renders their requests (translate.ts serveTools/buildChat + the ChatML template, byte for byte: check-render.ts).

Two kinds of conversation (a group of 8 shares one system block):
- demo (src/demo): the three tools of src/demo/demo-tools.ts with their schemas and descriptions (calculator,
  get_time, the custom apply_patch with its Lark grammar), in the page's order; the page sends the file it edits
  (notes.txt) as a developer message at the start and again after each change. 1-8 user turns mixing arithmetic,
  time zones, list edits, small talk and requests no tool here serves (weather, unit conversion: answered in text);
  tool results exactly as runDemoTool returns them (String(number), en-GB full date and long time, "Done. notes.txt
  now has N lines."), final answers that quote the result verbatim.
- web IDE (examples/web-ide): its one apply_patch tool (one line replaced by one or two lines of the open file,
  the grammar singleLineEditGrammar makes), the developer message with the open file, one instruction: a rename, a
  changed literal or an added line in its sample files (src/greet.ts, src/config.ts, README.md) and in made-up files
  of the same shape; "Patch applied." then a final answer quoting it (or the rejection).

Held-out prompts (eval.jsonl, multiturn.jsonl) use phrasings and values (expressions, time zones, list items,
identifiers, literals) that training never sees.

python3 demo_corpus.py --seed 2026 --train 12000 --out .tmp/toy2
"""
import argparse
import datetime
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus as C  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CUSTOM_SUFFIX = C.CUSTOM_SUFFIX


def lark_grammar():
    src = open(os.path.join(ROOT, "src/demo/apply-patch-grammar.ts")).read()
    return re.search(r"String\.raw`(.*?)`;", src, re.S).group(1)


APPLY_PATCH_GRAMMAR = lark_grammar()
DEMO_FILE = "notes.txt"
DEMO_INITIAL_FILE = "Shopping list\n- bread\n- milk\n"


def custom_chat_tool(name, description, grammar):
    desc = description + "\n\n" + CUSTOM_SUFFIX + "\n\nThe input must match this Lark grammar:\n" + grammar
    return {"type": "function", "function": {"name": name, "description": desc,
                                             "parameters": json.loads(json.dumps(C.CUSTOM_TOOL_PARAMETERS))}}


# src/demo/demo-tools.ts as serveTools gives them to the template (order, descriptions, schemas).
DEMO_TOOLS = [
    {"type": "function", "function": {"name": "calculator", "description": "Evaluate an arithmetic expression with + - * / ( ) and decimals.",
                                      "parameters": {"type": "object", "properties": {"expression": {"type": "string", "description": "e.g. (2 + 3) * 4.5"}},
                                                     "required": ["expression"], "additionalProperties": False}}},
    {"type": "function", "function": {"name": "get_time", "description": "The current date and time in a time zone.",
                                      "parameters": {"type": "object", "properties": {"timezone": {"type": "string", "description": "IANA name, e.g. Europe/Paris"}},
                                                     "required": ["timezone"], "additionalProperties": False}}},
    custom_chat_tool("apply_patch", f"Edit {DEMO_FILE} with a patch in the apply_patch format (*** Begin Patch / *** Update File / @@ / -old / +new / *** End Patch).",
                     APPLY_PATCH_GRAMMAR),
]


def demo_file_message(text):
    # src/demo/main.ts fileItem(): a developer message, rendered as a system message with the label.
    return {"role": "system", "content": f"Developer instructions:\nThe file {DEMO_FILE} holds:\n{text}"}


def single_line_edit_grammar(file_name, text, max_line=100):
    # src/demo/apply-patch-grammar.ts singleLineEditGrammar, byte for byte.
    lines = list(dict.fromkeys(l for l in text.split("\n") if l))
    lit = lambda s: json.dumps(s, ensure_ascii=False)
    head = lit("*** Begin Patch\n*** Update File: " + file_name + "\n@@\n-")
    return "\n".join([
        f'start: {head} OLD "\\n+" TEXT more? "\\n*** End Patch\\n"',
        'more: "\\n+" TEXT',
        "OLD: " + " | ".join(lit(l) for l in lines),
        f"TEXT: /[^\\n]{{0,{max_line}}}/",
        "",
    ])


def ide_tools(file_name, text):
    # examples/web-ide/main.ts tools(file)
    return [custom_chat_tool("apply_patch", f"Edit the open file {file_name}: replace one line with one or two lines (*** Update File: {file_name}, @@, -old line, +new lines).",
                             single_line_edit_grammar(file_name, text))]


def ide_system(file_name, text):
    return {"role": "system", "content": f"Developer instructions:\nYou are a coding agent. The open file is {file_name}:\n{text}"}


# ------------------------------------------------------------------ values

def js_num(v):
    """String(number) as JavaScript prints it, for the values these expressions give."""
    if isinstance(v, int):
        return str(v)
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


ZONES_HELD = "America/Lima Asia/Tbilisi Europe/Ljubljana Asia/Taipei Australia/Hobart America/Winnipeg Africa/Accra Asia/Karachi Europe/Riga America/Halifax Asia/Yerevan Europe/Bratislava".split()
ZONES_TRAIN = [z for z in C.ZONES_TRAIN if z not in ZONES_HELD] + ["Asia/Hong_Kong", "Europe/Brussels", "America/Phoenix", "Asia/Kathmandu", "Pacific/Honolulu"]
CITY_ZONE = dict(C.CITY_ZONE)
CITY_ZONE.update({"Tokyo": "Asia/Tokyo", "Paris": "Europe/Paris", "New York": "America/New_York", "Mumbai": "Asia/Kolkata",
                  "Delhi": "Asia/Kolkata", "Bangkok": "Asia/Bangkok", "Lisbon": "Europe/Lisbon", "Vienna": "Europe/Vienna",
                  "Amsterdam": "Europe/Amsterdam", "Stockholm": "Europe/Stockholm", "Athens": "Europe/Athens", "Istanbul": "Europe/Istanbul",
                  "Mexico City": "America/Mexico_City", "Sao Paulo": "America/Sao_Paulo", "Buenos Aires": "America/Argentina/Buenos_Aires",
                  "Nairobi": "Africa/Nairobi", "Lagos": "Africa/Lagos", "Johannesburg": "Africa/Johannesburg", "Denver": "America/Denver",
                  "Vancouver": "America/Vancouver", "Auckland": "Pacific/Auckland", "Melbourne": "Australia/Melbourne", "Perth": "Australia/Perth",
                  "Hong Kong": "Asia/Hong_Kong", "Honolulu": "Pacific/Honolulu", "Jakarta": "Asia/Jakarta", "Manila": "Asia/Manila"})
TZ_NAMES = ["UTC", "GMT", "CET", "CEST", "EET", "EEST", "BST", "WET", "GMT+1", "GMT+2", "GMT+3", "GMT+4", "GMT+5:30", "GMT+7",
            "GMT+8", "GMT+9", "GMT+10", "GMT+11", "GMT+12", "GMT-3", "GMT-4", "GMT-5", "GMT-6", "GMT-7", "GMT-8", "GMT-10", "GMT+5:45"]


def time_string(r):
    # new Date().toLocaleString('en-GB', {timeZone, dateStyle: 'full', timeStyle: 'long'})
    d = datetime.date(2024, 1, 1) + datetime.timedelta(days=r.randint(0, 4 * 365))
    return f"{d.strftime('%A')}, {d.day} {d.strftime('%B')} {d.year} at {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d} {r.choice(TZ_NAMES)}"


def novel_zone(r):
    return r.choice(["Europe", "Asia", "America", "Africa", "Australia", "Pacific", "Atlantic", "Indian"]) + "/" + C.novel_city(r).replace(" ", "_")


ITEMS_TRAIN = """eggs butter cheese apples bananas rice pasta coffee tea sugar flour salt pepper onions garlic tomatoes potatoes
carrots yogurt honey jam cereal oats soap shampoo batteries candles stamps envelopes tissues lemons limes oranges grapes
chicken fish beans lentils chocolate cookies juice water soda spinach lettuce cucumbers mushrooms peppers""".split()
ITEMS_HELD = "avocados walnuts ginger basil sardines pickles mangoes crackers noodles toothpaste".split()
TITLES_TRAIN = ["Shopping list", "Groceries", "To do", "Todo list", "Things to buy", "Weekend", "Packing list", "Errands", "Chores", "Notes"]
TITLES_HELD = ["Market run", "Camping trip"]


def item(r, split):
    if split == "held":
        return r.choice(ITEMS_HELD)
    x = r.random()
    if x < 0.5:
        return r.choice(ITEMS_TRAIN)
    if x < 0.6:
        return r.choice(ITEMS_TRAIN) + " " + r.choice(["x2", "(big)", "for Sam", "and more"])
    return C.novel_word(r, 1, 3)


def random_list(r, split):
    if r.random() < 0.25:
        return DEMO_INITIAL_FILE
    title = r.choice(TITLES_TRAIN) if r.random() < 0.8 else C.novel_word(r).capitalize()
    n = r.randint(1, 5)
    items = []
    while len(items) < n:
        it = item(r, "train")
        if it not in items:
            items.append(it)
    return title + "\n" + "".join(f"- {it}\n" for it in items)


# ------------------------------------------------------------------ phrasings

MATH_Q = {
    "train": C.MATH_Q["train"] + ["calc {e}", "{e} please", "Use the calculator: {e}", "What's the result of {e}?", "Add this up: {e}"],
    "held": C.MATH_Q["held"] + ["Give me {e}."],
}
TIME_Q = {"train": C.TIME_Q["train"], "held": C.TIME_Q["held"] + ["What's the date and time in {z}?"]}
TIME_Q_CITY = {"train": C.TIME_Q_CITY + ["What time is it in {c} now?", "Time in {c}?", "What's the date in {c}?", "Current time in {c}, please."],
               "held": ["Could you tell me the hour in {c}?"]}
ADD_Q = {"train": ["Add {i} to {f}.", "Add {i} to the list.", "Put {i} on the list.", "Please add {i} to {f}.", "Can you add {i} to my list?",
                   "Append {i} to {f}.", "I also need {i}. Add it to the list.", "Write {i} in {f}.", "Add a line for {i}.", "add {i}",
                   "Don't forget {i}: add it to {f}.", "Add {i} to my notes."],
         "held": ["Could you jot down {i} in {f}?", "Include {i} on my list, please."]}
REMOVE_Q = {"train": ["Remove {i} from {f}.", "Take {i} off the list.", "Delete {i} from the list.", "I don't need {i} any more. Remove it.",
                      "Cross {i} off {f}.", "Please remove the line {i}.", "remove {i}", "Drop {i} from my list."],
            "held": ["Get rid of {i} in {f}, please.", "Strike {i} from the list."]}
CHANGE_Q = {"train": ["Change {i} to {j} in {f}.", "Replace {i} with {j}.", "In {f}, change {i} to {j}.", "Swap {i} for {j} on the list.",
                      "Make {i} into {j}.", "Edit {f}: {i} should be {j}.", "Not {i} but {j}: fix the list.", "Update {i} to {j} in {f}."],
            "held": ["Turn {i} into {j} on my list.", "Please switch {i} to {j} in {f}."]}
TITLE_Q = {"train": ["Rename the list to {t}.", "Change the title of {f} to {t}.", "Call the list {t}.", "Make the first line {t}.", "Retitle {f} as {t}."],
           "held": ["Give {f} the heading {t}."]}
SMALL_TALK = {
    "train": [(q, a) for q, a in C.SMALL_TALK["train"] if "weather" not in a and "units" not in a] + [
        ("Who are you?", "I am a small assistant model running in your browser. I can do arithmetic, tell the time in a time zone and edit notes.txt with the tools this page gives me."),
        ("What can you do?", "I can do arithmetic with the calculator, tell the time in any time zone, and edit notes.txt. Just ask!"),
        ("Tell me about yourself.", "I am a tiny language model that runs in your browser, with a calculator, a clock and a notes.txt editor as tools."),
        ("I'm bored.", "Maybe I can help with something? Ask me for a sum, the time somewhere, or an edit to notes.txt."),
        ("What's in notes.txt?", "notes.txt is shown next to the chat. I can add, remove or change lines in it for you."),
        ("How do I use this page?", "Type a message and press Enter. I can calculate, tell the time in a time zone and edit notes.txt."),
        ("Thanks, that's perfect.", "Glad it helped!"),
        ("ok", "OK! Anything else?"),
        ("cool", "Glad you like it! Anything else?"),
        ("Hmm.", "Is there something I can help with?"),
        ("Are you there?", "Yes, I'm here. What can I do for you?"),
        ("Do you remember what I asked?", "I can see our conversation above. What would you like to do next?"),
        ("Tell me something interesting.", "Honey never spoils: edible honey has been found in very old tombs."),
        ("What is your favourite colour?", "I don't have one, but I'm happy to help with a sum or the time somewhere."),
        ("Thanks, bye!", "Goodbye! Have a nice day."),
        ("Good evening.", "Good evening! How can I help?"),
        ("You are wrong.", "Sorry about that. Tell me what to fix and I will try again."),
        ("Yes", "Great. What should I do next?"),
        ("No thanks.", "All right. I'm here if you need anything."),
    ],
    "held": C.SMALL_TALK["held"] + [("Howdy!", "Hi! What can I do for you?"), ("Have a good one.", "You too! Goodbye."),
                                    ("Can you hear me?", "I can read your messages. What can I do for you?"), ("Lovely, cheers.", "You're welcome!")],
}
UNSUPPORTED = {
    "train": ["What's the weather in {c}?", "Is it raining in {c}?", "Convert {v} km to miles.", "How many feet is {v} meters?",
              "Send an email to {n}.", "Search the web for {n}.", "What's the stock price of {n}?", "Play some music.", "Book a table for {v}."],
    "held": ["Will it snow in {c} tomorrow?", "How many ounces are in {v} grams?"],
}
UNSUPPORTED_A = ["I can't do that here: my tools are a calculator, a clock for time zones, and an editor for notes.txt.",
                 "Sorry, I have no tool for that. I can calculate, tell the time in a time zone, or edit notes.txt.",
                 "That is beyond what I can do on this page. Ask me for arithmetic, the time somewhere, or a change to notes.txt."]
THINK_CHAT = C.SMALL_TALK_THINK
THINK_UNSUPPORTED = ["The user asks for something none of my tools does. I should say so without calling a tool.",
                     "No tool here can do this; I will answer in text."]


def phrase(r, table, split, **v):
    return C.phrase(r, table, split, **v)


# ------------------------------------------------------------------ demo tasks

def task_math(r, split, held_exprs):
    while True:
        x = r.random()
        if split == "train" and x < 0.3:
            e, v = C.expression(r, small=True)
        elif x < 0.45:
            a, b = round(r.uniform(0.5, 99), r.choice([1, 2])), r.randint(2, 40)
            op = r.choice(["+", "-", "*"])
            e = f"{a} {op} {b}" if r.random() < 0.5 else f"({a} + {b}) {op} {r.randint(2, 9)}"
            v = eval(e)
        else:
            e, v = C.expression(r)
            if "/" in e and r.random() < 0.5:
                a, b = r.randint(1, 200), r.randint(2, 30)
                e = f"{a} / {b}"
                v = a / b
        if (e in held_exprs) == (split == "held"):
            break
        if split == "held":
            held_exprs.add(e)
            break
    res = js_num(v)
    q = phrase(r, MATH_Q, split, e=e)
    think = r.choice([f"The user wants {e}. I'll use the calculator to get it exactly.", f"I need to compute {e}. The calculator tool can do it.",
                      f"Arithmetic: {e}. Let me call calculator."])
    final = r.choice([f"{e} = {res}", f"{e} = {res}.", f"The result of {e} is {res}.", f"{e} equals {res}.", f"It's {res}."])
    return q, think, ("calculator", {"expression": e}), res, final


def task_time(r, split):
    if split == "train" and r.random() < 0.35:
        city = r.choice(sorted(CITY_ZONE))
        zone = CITY_ZONE[city]
        q, place = C.decorate(r, r.choice(TIME_Q_CITY["train"]).format(c=city)), city
    else:
        zone = r.choice(ZONES_TRAIN if split == "train" else ZONES_HELD)
        if split == "train" and r.random() < 0.5:
            zone = novel_zone(r)
        q, place = phrase(r, TIME_Q, split, z=zone), zone
    res = time_string(r)
    think = r.choice([f"The user wants the current time in {place}. The time zone is {zone}; I'll call get_time.",
                      f"I need the local time for {zone}. get_time can tell me."])
    final = r.choice([f"In {place} it is {res}.", f"It is {res} in {place}.", f"The current time in {place}: {res}.", f"Right now in {place}: {res}."])
    return q, think, ("get_time", {"timezone": zone}), res, final


def list_items(text):
    return [l[2:] for l in text.split("\n") if l.startswith("- ")]


def fresh_item(r, split, items):
    """A list item that is not among items."""
    new = item(r, split)
    while new in items:
        new = item(r, split)
    return new


def item_edit(r, split, old, new=None):
    """(question, patch, think) for removing the line '- old' of the demo file, or changing it to '- new'."""
    f = DEMO_FILE
    if new is None:
        return (phrase(r, REMOVE_Q, split, i=old, f=f), f"*** Begin Patch\n*** Update File: {f}\n@@\n-- {old}\n*** End Patch",
                f"The user wants {old} removed from {f}. I'll delete the line '- {old}' with apply_patch.")
    return (phrase(r, CHANGE_Q, split, i=old, j=new, f=f), f"*** Begin Patch\n*** Update File: {f}\n@@\n-- {old}\n+- {new}\n*** End Patch",
            f"The user wants {old} changed to {new} in {f}. I'll replace the line with apply_patch.")


def task_patch(r, split, file_text):
    """An edit of the demo file; returns the task and the new file text (None when it cannot apply)."""
    lines = file_text.split("\n")
    items = list_items(file_text)
    kinds = ["add", "add", "title"] + (["remove", "change"] if items else [])
    kind = r.choice(kinds)
    f = DEMO_FILE
    if kind == "add":
        new = fresh_item(r, split, items)
        q = phrase(r, ADD_Q, split, i=new, f=f)
        last = max(i for i, l in enumerate(lines) if l)
        ctx = lines[last]
        patch = f"*** Begin Patch\n*** Update File: {f}\n@@\n {ctx}\n+- {new}\n*** End Patch"
        new_lines = lines[: last + 1] + [f"- {new}"] + lines[last + 1:]
        think = f"The user wants {new} added to {f}. I'll add a line after '{ctx}' with apply_patch."
        final = r.choice([f"I added {new} to {f}. {{res}}", f"Added {new}. {{res}}", f"{{res}} I put {new} on the list."])
    elif kind == "remove":
        old = r.choice(items)
        q, patch, think = item_edit(r, split, old)
        at = lines.index(f"- {old}")
        new_lines = lines[:at] + lines[at + 1:]
        final = r.choice([f"I removed {old} from {f}. {{res}}", f"Removed {old}. {{res}}", f"{{res}} {old} is off the list."])
    elif kind == "change":
        old = r.choice(items)
        new = fresh_item(r, split, items)
        q, patch, think = item_edit(r, split, old, new)
        at = lines.index(f"- {old}")
        new_lines = lines[:at] + [f"- {new}"] + lines[at + 1:]
        final = r.choice([f"I changed {old} to {new} in {f}. {{res}}", f"Done: {old} is now {new}. {{res}}"])
    else:
        title = r.choice(TITLES_TRAIN if split == "train" else TITLES_HELD) if r.random() < 0.7 or split == "held" else C.novel_word(r).capitalize()
        if title == lines[0]:
            title = title + " 2"
        q = phrase(r, TITLE_Q, split, t=title, f=f)
        patch = f"*** Begin Patch\n*** Update File: {f}\n@@\n-{lines[0]}\n+{title}\n*** End Patch"
        new_lines = [title] + lines[1:]
        think = f"The user wants the first line of {f} to be {title}. I'll replace '{lines[0]}' with apply_patch."
        final = r.choice([f"I renamed the list to {title}. {{res}}", f"The title is now {title}. {{res}}"])
    new_text = "\n".join(new_lines)
    res = f"Done. {f} now has {len(new_lines)} lines."
    return q, think, ("apply_patch", {"input": patch}), res, final.format(res=res), new_text


def task_chat(r, split, pool=None):
    q, a = r.choice(pool or SMALL_TALK[split])
    return C.decorate(r, q) if split == "train" else q, r.choice(THINK_CHAT), None, None, a


def task_unsupported(r, split, pool=None):
    if pool:
        q = r.choice(pool)
    else:
        city = r.choice(C.CITIES_TRAIN if split == "train" else C.CITIES_HELD).replace("_", " ")
        q = phrase(r, UNSUPPORTED, split, c=city, v=r.randint(2, 90), n=C.novel_word(r).capitalize())
    return q, r.choice(THINK_UNSUPPORTED), None, None, r.choice(UNSUPPORTED_A)


# Tool errors, as the page's tools word them (src/demo/demo-tools.ts: "Error: " + the exception's message; a zone
# Intl does not know throws V8's RangeError "Invalid time zone specified: X"; the calculator knows + - * / and
# parentheses). The answer quotes the error and says what would work; it does not call again.
def task_time_error(r, split):
    zone = novel_zone(r) if r.random() < 0.7 else C.novel_city(r)
    q = phrase(r, TIME_Q, split, z=zone)
    res = f"Error: Invalid time zone specified: {zone}"
    think = r.choice([f"The user wants the current time in {zone}. I'll call get_time with {zone}.", f"I need the local time for {zone}. get_time can tell me."])
    example = r.choice(ZONES_TRAIN)
    final = r.choice([f"get_time does not know {zone}: {res}. Time zone names look like {example}.",
                      f"I could not get the time. The tool said: {res}. Is {zone} spelled right? Try a name like {example}.",
                      f"The clock tool answered {res}, so I have no time for {zone}. A zone such as {example} works."])
    return q, think, ("get_time", {"timezone": zone}), res, final


def task_math_error(r, split):
    a, b = r.randint(2, 99), r.randint(2, 12)
    e = r.choice([f"{a} ^ {b}", f"{a}^{b}", f"{a} % {b}", f"{a} mod {b}", f"sqrt({a})", f"{b}!", f"{a} x {b}", f"{a} to the power of {b}"])
    q = phrase(r, MATH_Q, split, e=e)
    res = f"Error: not an arithmetic expression: {e}"
    think = r.choice([f"The user wants {e}. I'll use the calculator to get it exactly.", f"I need to compute {e}. The calculator tool can do it."])
    final = r.choice([f"The calculator could not do that: {res}. It knows + - * / and parentheses.",
                      f"The tool answered {res}. Write it with + - * / and parentheses, e.g. {a} * {a}, and I'll try again.",
                      f"I couldn't compute {e}: {res}."])
    return q, think, ("calculator", {"expression": e}), res, final


def task_patch_error(r, split, file_text):
    """A removal or change of an item that is not in the file: the patch the user asked for does not apply."""
    missing = fresh_item(r, split, list_items(file_text))
    f = DEMO_FILE
    q, patch, think = item_edit(r, split, missing, None if r.random() < 0.5 else item(r, split))
    res = f"Error: hunk does not match the file: - {missing}"
    final = r.choice([f"{missing} is not in {f}, so nothing changed. The tool said: {res}.",
                      f"That edit did not apply ({res}): there is no line '- {missing}' in {f}.",
                      f"I could not change {f}: {res}. The list has no {missing}."])
    return q, think, ("apply_patch", {"input": patch}), res, final, None


DEMO_KINDS = ["math", "time", "patch", "chat", "unsupported"]
DEMO_WEIGHTS = [0.27, 0.22, 0.23, 0.2, 0.08]
AFTER = ["The tool answered. I can reply now and quote its result.", "I have the result, so I'll answer with it.",
         "Got the tool's answer; now the final reply."]
AFTER_ERROR = ["The tool answered with an error. I'll tell the user what it said.", "That is an error, not a result; I'll say so."]


def demo_conversation(r, split, held_exprs, initial_file, n_tasks, kinds=None, chat_pool=None, unsupported_pool=None):
    """messages, trained assistant indices, the last message generated without thinking, and the file per turn.
    chat_pool: (question, reply) pairs the small talk is drawn from, in place of SMALL_TALK[split];
    unsupported_pool: requests no tool serves, in place of UNSUPPORTED[split]. kinds may also hold "time-error",
    "math-error" and "patch-error" (a call whose tool answers with an error)."""
    messages = [demo_file_message(initial_file)]
    file_text, sent = initial_file, initial_file
    trained, call_id = set(), 0
    kinds = kinds or [r.choices(DEMO_KINDS, DEMO_WEIGHTS)[0] for _ in range(n_tasks)]
    no_think_last = False
    for ti, kind in enumerate(kinds):
        last = ti == len(kinds) - 1
        if file_text != sent:
            messages.append(demo_file_message(file_text))
            sent = file_text
        new_text = None
        if kind == "math":
            q, think, call, res, final = task_math(r, split, held_exprs)
        elif kind == "time":
            q, think, call, res, final = task_time(r, split)
        elif kind == "patch":
            q, think, call, res, final, new_text = task_patch(r, split, file_text)
        elif kind == "chat":
            q, think, call, res, final = task_chat(r, split, chat_pool)
        elif kind == "patch-error":
            q, think, call, res, final, new_text = task_patch_error(r, split, file_text)
        elif kind == "time-error":
            q, think, call, res, final = task_time_error(r, split)
        elif kind == "math-error":
            q, think, call, res, final = task_math_error(r, split)
        else:
            q, think, call, res, final = task_unsupported(r, split, unsupported_pool)
        messages.append({"role": "user", "content": q})
        keep = last or r.random() < 0.85
        if call is None:
            if last and r.random() < 0.1:
                no_think_last, keep = True, False
            m = {"role": "assistant", "content": final}
            if keep:
                m["reasoning_content"] = think
            messages.append(m)
            if keep or no_think_last:
                trained.add(len(messages) - 1)
            continue
        m = {"role": "assistant", "content": "", "tool_calls": [{"id": f"call_{call_id}", "type": "function", "function": {"name": call[0], "arguments": call[1]}}]}
        if keep:
            m["reasoning_content"] = think
            trained.add(len(messages))
        messages.append(m)
        messages.append({"role": "tool", "content": res, "tool_call_id": f"call_{call_id}", "name": call[0]})
        call_id += 1
        m2 = {"role": "assistant", "content": final}
        if keep:
            m2["reasoning_content"] = r.choice(AFTER_ERROR if res.startswith("Error:") else AFTER)
            trained.add(len(messages))
        messages.append(m2)
        if new_text is not None:
            file_text = new_text
    return messages, trained, no_think_last, kinds


# ------------------------------------------------------------------ web IDE tasks

IDE_FILES = {
    "src/greet.ts": "export function greet(name: string) {\n  return 'Hello ' + name;\n}\n",
    "src/config.ts": 'export const retries = 3;\nexport const timeoutMs = 5000;\nexport const greeting = "Hello";\n',
    "README.md": "# Sample project\n\nA tiny project the agent edits.\n",
}
IDENT_TRAIN = "welcome hello salute sayHi greetUser makeGreeting hail wave meet introduce farewell respond answer reply".split()
IDENT_HELD = "beckon toast applaud".split()
WORDS_HELD = "Howdy Ahoy Greetings Bonjour".split()
WORDS_TRAIN = "Hi Hey Welcome Hola Ciao Salut Hallo Yo Good_day Cheers Morning Ola".split()
NUMS_HELD = [7, 11, 42, 2500, 9000, 1234]


def ide_value(r, split, kind):
    if kind == "ident":
        return r.choice(IDENT_HELD) if split == "held" else (r.choice(IDENT_TRAIN) if r.random() < 0.5 else C.novel_word(r, 2, 3))
    if kind == "word":
        return r.choice(WORDS_HELD) if split == "held" else (r.choice(WORDS_TRAIN).replace("_", " ") if r.random() < 0.5 else C.novel_word(r, 1, 3).capitalize())
    while True:
        n = r.choice(NUMS_HELD) if split == "held" else r.choice([r.randint(0, 20), r.randint(1, 999), r.randint(1, 99) * 100])
        if (n in NUMS_HELD) == (split == "held"):
            return n


def random_ide_file(r):
    """A made-up file of the same shape as the samples: (name, text)."""
    x = r.random()
    if x < 0.4:
        fn, param = C.novel_word(r, 2, 3), r.choice(["name", "who", "user", "text", "value"])
        word = r.choice(WORDS_TRAIN).replace("_", " ")
        return f"src/{C.novel_word(r, 2, 2)}.ts", f"export function {fn}({param}: string) {{\n  return '{word} ' + {param};\n}}\n"
    if x < 0.75:
        names = r.sample(["retries", "timeoutMs", "greeting", "maxItems", "port", "delayMs", "title", "limit", "level", "mode"], r.randint(2, 4))
        lines = []
        for n in names:
            if n in ("greeting", "title", "mode", "level"):
                lines.append(f'export const {n} = "{ide_value(r, "train", "word")}";')
            else:
                lines.append(f"export const {n} = {ide_value(r, 'train', 'num')};")
        return f"src/{C.novel_word(r, 2, 2)}.ts", "\n".join(lines) + "\n"
    title = " ".join(w.capitalize() for w in [C.novel_word(r, 1, 2), r.choice(["project", "app", "tool", "notes"])])
    return r.choice(["README.md", "NOTES.md", f"docs/{C.novel_word(r, 2, 2)}.md"]), f"# {title}\n\nA {r.choice(['tiny', 'small', 'simple'])} {r.choice(['project', 'library', 'demo'])} the agent edits.\n"


RENAME_Q = {"train": ["Rename {a} to {b}.", "Rename the function {a} to {b}.", "Call the function {b} instead of {a}.", "Change the name {a} to {b}.",
                      "rename {a} -> {b}", "Please rename {a} as {b}.", "I want {a} renamed to {b}."],
            "held": ["Give {a} the new name {b}.", "Let's call {a} {b} from now on."]}
SET_Q = {"train": ["Set {n} to {v}.", "Change {n} to {v}.", "Make {n} {v}.", "{n} should be {v}.", "Update {n} to {v}, please.", "set {n} = {v}",
                   "Change the value of {n} to {v}."],
         "held": ["Bump {n} up to {v}.", "I'd like {n} to be {v}."]}
WORD_Q = {"train": ["Change '{a}' to '{b}'.", "Say '{b}' instead of '{a}'.", "Replace '{a}' with '{b}'.", "Use '{b}' rather than '{a}'.",
                    "Change the greeting word '{a}' to '{b}'."],
          "held": ["Swap the word '{a}' for '{b}'."]}
TITLE_IDE_Q = {"train": ["Change the title to {b}.", "Rename the heading to {b}.", "Make the title {b}.", "The heading should say {b}."],
               "held": ["Retitle the readme as {b}."]}
ADDLINE_Q = {"train": ["Add the line {l} after {a}.", "Insert {l} below the line {a}.", "After {a}, add {l}.", "Add a line: {l} (after {a})."],
             "held": ["Put a new line {l} right after {a}."]}
EXTRA_CONSTS = [("verbose", "true"), ("debug", "false"), ("maxItems", "10"), ("version", "'1.0'"), ("port", "8080"), ("locale", "'en'")]
EXTRA_HELD = [("strictMode", "true"), ("cacheSize", "64")]


def ide_task(r, split, name, text):
    """(instruction, old line, new lines) for one edit of the file."""
    lines = [l for l in text.split("\n") if l]
    for _ in range(20):
        line = r.choice(lines)
        m = re.match(r"export function (\w+)\((\w+): string\) \{", line)
        if m:
            b = ide_value(r, split, "ident")
            return phrase(r, RENAME_Q, split, a=m.group(1), b=b), line, [line.replace(m.group(1), b, 1)]
        m = re.match(r"  return '([^']+) ' \+ (\w+);", line)
        if m:
            b = ide_value(r, split, "word")
            return phrase(r, WORD_Q, split, a=m.group(1), b=b), line, [line.replace(f"'{m.group(1)} '", f"'{b} '", 1)]
        m = re.match(r"export const (\w+) = (\d+);", line)
        if m:
            if r.random() < 0.3:
                n, v = r.choice(EXTRA_CONSTS if split == "train" else EXTRA_HELD)
                new = f"export const {n} = {v};"
                if new not in lines:
                    return phrase(r, ADDLINE_Q, split, l=new, a=m.group(1)), line, [line, new]
            v = ide_value(r, split, "num")
            if str(v) == m.group(2):
                continue
            return phrase(r, SET_Q, split, n=m.group(1), v=v), line, [f"export const {m.group(1)} = {v};"]
        m = re.match(r'export const (\w+) = "([^"]*)";', line)
        if m:
            b = ide_value(r, split, "word")
            return phrase(r, SET_Q, split, n=m.group(1), v=f'"{b}"'), line, [f'export const {m.group(1)} = "{b}";']
        m = re.match(r"# (.+)", line)
        if m:
            b = (" ".join(w.capitalize() for w in [C.novel_word(r, 1, 2), r.choice(["project", "app", "demo"])]) if split == "train"
                 else r.choice(["Hello world", "Greeter kit", "Demo repo"]))
            return phrase(r, TITLE_IDE_Q, split, b=b), line, [f"# {b}"]
    return None


def ide_conversation(r, split, name, text, task=None):
    task = task or ide_task(r, split, name, text)
    if task is None:
        return None
    q, old, new = task
    patch = f"*** Begin Patch\n*** Update File: {name}\n@@\n-{old}\n" + "".join(f"+{l}\n" for l in new) + "*** End Patch\n"
    messages = [ide_system(name, text), {"role": "user", "content": q}]
    think = r.choice([f"The user wants an edit in {name}: the line '{old}' becomes '{new[-1] if len(new) == 1 else ' / '.join(new)}'. I'll call apply_patch.",
                      f"I need to replace the line '{old}' in {name}. apply_patch does it."])
    rejected = split == "train" and r.random() < 0.1
    res = "The user rejected this patch; do not repeat it." if rejected else "Patch applied."
    messages.append({"role": "assistant", "content": "", "reasoning_content": think,
                     "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "apply_patch", "arguments": {"input": patch}}}]})
    messages.append({"role": "tool", "content": res, "tool_call_id": "call_0", "name": "apply_patch"})
    shown = " / ".join(new)
    final = (r.choice([f"OK, {name} stays as it was.", f"The patch was rejected, so {name} is unchanged."]) if rejected else
             r.choice([f"Patch applied. In {name}, {old.strip()} is now {shown.strip()}.", f"Patch applied. {name} now has: {shown.strip()}"]))
    messages.append({"role": "assistant", "content": final, "reasoning_content": r.choice(AFTER)})
    return messages, {2, 4}, patch, res


# ------------------------------------------------------------------ output

def line_of(messages, tools, trained, no_think_last, extra):
    segs = C.render_segments(messages, tools, trained, no_think_last)
    d = {"prefix": segs[0][0], "segments": segs[1:], "render": C.render_spec(messages, tools, no_think_last)}
    d.update(extra)
    return d


def eval_items(r, held_exprs, per_kind):
    items = []
    for kind in ["math", "time", "patch", "chat", "unsupported"]:
        for _ in range(per_kind):
            f = DEMO_INITIAL_FILE if r.random() < 0.5 else random_list(random.Random(r.random()), "train")
            msgs, _, _, _ = demo_conversation(r, "held", held_exprs, f, 1, [kind])
            user_at = max(i for i, m in enumerate(msgs) if m["role"] == "user")
            exp, res = None, None
            if len(msgs) > user_at + 2 and msgs[user_at + 1].get("tool_calls"):
                fc = msgs[user_at + 1]["tool_calls"][0]["function"]
                exp, res = {"name": fc["name"], "arguments": fc["arguments"]}, msgs[user_at + 2]["content"]
            items.append({"kind": kind, "messages": msgs[: user_at + 1], "tools": DEMO_TOOLS, "expected": exp, "tool_result": res})
    names = list(IDE_FILES)
    for i in range(per_kind * 2):
        name = names[i % len(names)]
        msgs, _, patch, res = ide_conversation(r, "held", name, IDE_FILES[name])
        items.append({"kind": "ide", "messages": msgs[:2], "tools": ide_tools(name, IDE_FILES[name]),
                      "expected": {"name": "apply_patch", "arguments": {"input": patch}}, "tool_result": res})
    return items


def multiturn_items(r, held_exprs, n):
    """Held-out conversations of 8 user turns (only the user messages; the eval runs the tools itself)."""
    out = []
    for _ in range(n):
        kinds = [r.choices(DEMO_KINDS, DEMO_WEIGHTS)[0] for _ in range(8)]
        msgs, _, _, _ = demo_conversation(r, "held", held_exprs, DEMO_INITIAL_FILE, 8, kinds)
        out.append({"kinds": kinds, "users": [m["content"] for m in msgs if m["role"] == "user"], "file": DEMO_INITIAL_FILE})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--train", type=int, default=12000)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--ide-share", type=float, default=0.25, help="share of groups that are web-IDE conversations")
    ap.add_argument("--eval-per-task", type=int, default=30)
    ap.add_argument("--multiturn", type=int, default=20)
    ap.add_argument("--out", default=".tmp/toy2")
    a = ap.parse_args()
    C.OPTIONS["novel"] = 0.5
    os.makedirs(a.out, exist_ok=True)
    r = random.Random(a.seed)
    held_exprs = set()
    with open(os.path.join(a.out, "eval.jsonl"), "w") as f:
        for it in eval_items(r, held_exprs, a.eval_per_task):
            f.write(json.dumps(it, ensure_ascii=False) + "\n")
    with open(os.path.join(a.out, "multiturn.jsonl"), "w") as f:
        for it in multiturn_items(r, held_exprs, a.multiturn):
            f.write(json.dumps(it, ensure_ascii=False) + "\n")
    n = 0
    group = 0
    with open(os.path.join(a.out, "train.jsonl"), "w") as f:
        while n < a.train:
            if r.random() < a.ide_share:
                name, text = (lambda k: (k, IDE_FILES[k]))(r.choice(list(IDE_FILES))) if r.random() < 0.6 else random_ide_file(r)
                tools = ide_tools(name, text)
                for _ in range(a.group):
                    c = ide_conversation(r, "train", name, text)
                    if c is None:
                        continue
                    f.write(json.dumps(line_of(c[0], tools, c[1], False, {"group": group, "kind": "ide"}), ensure_ascii=False) + "\n")
                    n += 1
            else:
                initial = random_list(r, "train")
                # Mostly short conversations (attention makes long ones cost 2-3x per token on the CPU), some of
                # every length up to 8 turns (~2,000 tokens with the system block).
                n_tasks = r.choices([1, 2, 3, 4, 5, 6, 7, 8], [0.45, 0.2, 0.1, 0.07, 0.05, 0.04, 0.04, 0.05])[0]
                for _ in range(a.group):
                    msgs, trained, ntl, kinds = demo_conversation(r, "train", held_exprs, initial, n_tasks)
                    f.write(json.dumps(line_of(msgs, DEMO_TOOLS, trained, ntl, {"group": group, "kind": "demo", "kinds": kinds}), ensure_ascii=False) + "\n")
                    n += 1
            group += 1
    print(f"wrote {n} training conversations in {group} groups to {a.out}")


if __name__ == "__main__":
    main()
