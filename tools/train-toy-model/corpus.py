"""Synthetic chat transcripts for the toy model, rendered in the Qwen3-style ChatML of
tools/make-test-model/chatml-template.ts, byte for byte (check-render.ts renders every conversation with
@huggingface/jinja and compares).

Each conversation: an optional system message (instructions, or a `Developer instructions:` block), tools
declared in the system message (a random set and order that always holds the tool the task needs), then 1-3
tasks: the user asks; the assistant thinks inside <think>, may write one sentence of commentary, calls a tool
(<tool_call> JSON), reads the tool's answer (a user turn with <tool_response>) and replies. Small talk gets a reply
with no tool. Tasks: weather, arithmetic, time zones, unit conversion, a file edit through the custom tool
`apply_patch` (shimmed as a function with one `input: string`), small talk.

The split is by phrasing AND value: held-out prompts use user phrasings and values (cities, time zones, unit
pairs, numbers, file names, edits) that never occur in training.

Output (JSONL), one conversation per line:
  {"segments": [[text, trained], ...], "render": {"messages", "tools", "add_generation_prompt", "enable_thinking",
   "suffix"}}  (text == jinja(render) + render.suffix)
and eval.jsonl for held-out prompts with the expected tool call.

python3 corpus.py --seed 1234 --train 12000 --out .tmp/toy
"""
import argparse
import json
import os
import random

# ------------------------------------------------------------------ tools as the runtime declares them

CUSTOM_TOOL_PARAMETERS = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The raw input for the tool."}},
    "required": ["input"],
    "additionalProperties": False,
}
CUSTOM_SUFFIX = "Call this tool with one argument, `input`: the raw text input for the tool (not JSON unless the tool asks for JSON)."


def fn(name, description, properties, required):
    f = {"name": name}
    if description is not None:
        f["description"] = description
    f["parameters"] = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": f}


def custom(name, description):
    # src/responses/translate.ts serveTools + customToolDescription
    desc = (description + "\n\n" + CUSTOM_SUFFIX) if description else CUSTOM_SUFFIX
    return {"type": "function", "function": {"name": name, "description": desc, "parameters": json.loads(json.dumps(CUSTOM_TOOL_PARAMETERS))}}


def tool_variants():
    """Each tool name -> list of declarations (descriptions vary; the first is the canonical one)."""
    return {
        "get_weather": [
            fn("get_weather", "Get the current weather for a location.",
               {"location": {"type": "string", "description": "City name"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, ["location"]),
            fn("get_weather", "Current weather conditions in a city.",
               {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, ["location"]),
            fn("get_weather", None, {"location": {"type": "string"}, "unit": {"type": "string"}}, ["location"]),
        ],
        "calculator": [
            fn("calculator", "Evaluate an arithmetic expression.", {"expression": {"type": "string", "description": "For example 2 * (3 + 4)"}}, ["expression"]),
            fn("calculator", "A calculator for exact arithmetic.", {"expression": {"type": "string"}}, ["expression"]),
            fn("calculator", None, {"expression": {"type": "string"}}, ["expression"]),
        ],
        "get_time": [
            fn("get_time", "Get the current local time in an IANA time zone.", {"timezone": {"type": "string", "description": "IANA time zone, e.g. Europe/Paris"}}, ["timezone"]),
            fn("get_time", "Current time in a time zone.", {"timezone": {"type": "string"}}, ["timezone"]),
            fn("get_time", None, {"timezone": {"type": "string"}}, ["timezone"]),
        ],
        "convert_units": [
            fn("convert_units", "Convert a value from one unit to another.",
               {"value": {"type": "number"}, "from": {"type": "string"}, "to": {"type": "string"}}, ["value", "from", "to"]),
            fn("convert_units", "Unit conversion (length, mass, volume, temperature).",
               {"value": {"type": "number", "description": "The amount"}, "from": {"type": "string", "description": "Source unit"}, "to": {"type": "string", "description": "Target unit"}}, ["value", "from", "to"]),
            fn("convert_units", None, {"value": {"type": "number"}, "from": {"type": "string"}, "to": {"type": "string"}}, ["value", "from", "to"]),
        ],
        "apply_patch": [
            custom("apply_patch", "Apply a patch to files in the workspace."),
            custom("apply_patch", "Edit files with a patch in the apply_patch format."),
            custom("apply_patch", None),
        ],
        # Distractors: offered, never the right tool.
        "search_web": [
            fn("search_web", "Search the web.", {"query": {"type": "string"}}, ["query"]),
            fn("search_web", None, {"query": {"type": "string"}}, ["query"]),
        ],
        "send_email": [
            fn("send_email", "Send an email.", {"to": {"type": "string"}, "subject": {"type": "string"}, "body": {"type": "string"}}, ["to", "body"]),
        ],
        "get_stock_price": [
            fn("get_stock_price", "Latest price of a stock.", {"symbol": {"type": "string"}}, ["symbol"]),
        ],
        "read_file": [
            fn("read_file", "Read a file from the workspace.", {"path": {"type": "string"}}, ["path"]),
        ],
    }


TASK_TOOL = {"weather": "get_weather", "math": "calculator", "time": "get_time", "units": "convert_units", "patch": "apply_patch"}

# ------------------------------------------------------------------ values (train / held-out)

CITIES_TRAIN = """Paris London Berlin Madrid Rome Lisbon Dublin Vienna Prague Warsaw Budapest Athens Oslo Stockholm
Helsinki Copenhagen Amsterdam Brussels Zurich Geneva Munich Hamburg Milan Naples Barcelona Seville Porto Lyon
Marseille Krakow Tokyo Osaka Kyoto Seoul Beijing Shanghai Delhi Mumbai Bangkok Hanoi Manila Jakarta Sydney
Melbourne Auckland Toronto Montreal Vancouver Chicago Boston Denver Seattle Austin Miami Dallas Phoenix Mexico_City
Bogota Santiago Buenos_Aires Cairo Nairobi Lagos Casablanca Dubai Istanbul Tehran Riyadh Moscow Kyiv Riga Tallinn
Vilnius Edinburgh Glasgow Cardiff Belfast Reykjavik Havana Quito Perth Brisbane Houston Atlanta Detroit Portland""".split()
CITIES_HELD = "Lima Montevideo Tbilisi Yerevan Ljubljana Bratislava Valencia Bordeaux Nagoya Taipei Hobart Winnipeg Accra Kampala Doha".split()

ZONES_TRAIN = """Europe/Paris Europe/London Europe/Berlin Europe/Madrid Europe/Rome Europe/Lisbon Europe/Dublin Europe/Vienna
Europe/Prague Europe/Warsaw Europe/Athens Europe/Oslo Europe/Stockholm Europe/Helsinki Europe/Amsterdam Europe/Zurich
Europe/Moscow Europe/Istanbul Asia/Tokyo Asia/Seoul Asia/Shanghai Asia/Kolkata Asia/Bangkok Asia/Dubai Asia/Singapore
Asia/Jakarta Asia/Manila Asia/Tehran Australia/Sydney Australia/Melbourne Australia/Perth Pacific/Auckland
America/New_York America/Chicago America/Denver America/Los_Angeles America/Toronto America/Vancouver
America/Mexico_City America/Bogota America/Santiago America/Sao_Paulo America/Argentina/Buenos_Aires Africa/Cairo
Africa/Nairobi Africa/Lagos Africa/Johannesburg Atlantic/Reykjavik UTC""".split()
ZONES_HELD = "America/Lima Asia/Tbilisi Europe/Ljubljana Asia/Taipei Australia/Hobart America/Winnipeg Africa/Accra Asia/Karachi Europe/Riga America/Halifax".split()
# Cities whose zone the model may learn by heart (training only; held-out prompts name the zone).
CITY_ZONE = {"Paris": "Europe/Paris", "London": "Europe/London", "Berlin": "Europe/Berlin", "Madrid": "Europe/Madrid",
             "Rome": "Europe/Rome", "Tokyo": "Asia/Tokyo", "Seoul": "Asia/Seoul", "Shanghai": "Asia/Shanghai",
             "Sydney": "Australia/Sydney", "New York": "America/New_York", "Chicago": "America/Chicago",
             "Los Angeles": "America/Los_Angeles", "Toronto": "America/Toronto", "Dubai": "Asia/Dubai",
             "Singapore": "Asia/Singapore", "Cairo": "Africa/Cairo", "Moscow": "Europe/Moscow"}

# (from, to, factor) for linear units; temperatures handled apart.
UNIT_PAIRS = [
    ("miles", "kilometers", 1.609344), ("kilometers", "miles", 1 / 1.609344), ("feet", "meters", 0.3048),
    ("meters", "feet", 1 / 0.3048), ("inches", "centimeters", 2.54), ("centimeters", "inches", 1 / 2.54),
    ("pounds", "kilograms", 0.45359237), ("kilograms", "pounds", 1 / 0.45359237), ("ounces", "grams", 28.349523125),
    ("grams", "ounces", 1 / 28.349523125), ("liters", "gallons", 1 / 3.785411784), ("gallons", "liters", 3.785411784),
    ("yards", "meters", 0.9144), ("meters", "yards", 1 / 0.9144), ("cups", "milliliters", 236.5882365),
    ("celsius", "fahrenheit", None), ("fahrenheit", "celsius", None), ("kilometers", "meters", 1000.0),
    ("hours", "minutes", 60.0), ("minutes", "seconds", 60.0), ("days", "hours", 24.0), ("tons", "kilograms", 1000.0),
    ("seconds", "milliseconds", 1000.0), ("years", "days", 365.0), ("pints", "liters", 0.473176473),
    ("acres", "hectares", 0.40468564224), ("hectares", "acres", 1 / 0.40468564224), ("stones", "pounds", 14.0),
    ("millimeters", "centimeters", 0.1), ("weeks", "hours", 168.0), ("kilometers", "feet", 3280.839895),
    ("grams", "milligrams", 1000.0), ("quarts", "liters", 0.946352946), ("miles", "yards", 1760.0),
]
UNIT_PAIRS_HELD = [("meters", "inches", 39.37007874), ("miles", "feet", 5280.0), ("liters", "milliliters", 1000.0),
                   ("weeks", "days", 7.0), ("kilograms", "grams", 1000.0), ("feet", "inches", 12.0)]

FILES_TRAIN = """notes.txt todo.md README.md config.yaml main.py app.js index.html style.css setup.cfg Makefile
server.ts utils.go lib.rs shopping.txt plan.md settings.json report.txt hello.py test.sh data.csv""".split()
FILES_HELD = "journal.txt ideas.md deploy.yaml worker.js agenda.txt".split()

EDITS_TRAIN = [("buy milk", "buy bread"), ("Hello world", "Hello there"), ("debug = true", "debug = false"),
               ("port: 8080", "port: 3000"), ("color: red;", "color: blue;"), ("TODO: fix bug", "DONE: fix bug"),
               ("version = 1", "version = 2"), ("return a + b", "return a * b"), ("call mom", "call dad"),
               ("title: Draft", "title: Final"), ("x = 10", "x = 20"), ("Meeting at 9", "Meeting at 10"),
               ("print('hi')", "print('hello')"), ("max_len = 64", "max_len = 128"), ("enabled: no", "enabled: yes"),
               ("walk the dog", "feed the cat"), ("timeout = 30", "timeout = 60"), ("name = 'old'", "name = 'new'"),
               ("level: info", "level: warn"), ("width: 100px", "width: 200px"), ("step one", "step two"),
               ("apples", "oranges"), ("lr = 0.1", "lr = 0.01"), ("Dear Sir", "Dear Madam")]
EDITS_HELD = [("water plants", "water the garden"), ("retries = 3", "retries = 5"), ("font: serif", "font: sans"),
              ("Status: open", "Status: closed"), ("pay rent", "pay bills"), ("limit = 50", "limit = 75")]

# Made-up names (cities, zones, files, words): with --novel P, a training value is replaced by one with
# probability P, so that the model learns to copy values instead of recalling the ones it has seen.
SYLLABLES = ([c + v for c in "bdfgklmnprstvz" for v in "aeiou"] + ["ber", "lin", "mar", "ton", "vik", "sen", "dor", "ran"]
             + [c + v for c in ["tr", "br", "st", "gr", "pl", "kr", "sh", "ch", "th", "bl", "sl", "dr", "j", "h", "w"] for v in "aeiouy"]
             + ["an", "el", "is", "on", "ur", "ax", "ol", "em", "ia", "eo", "ov", "ek", "ad", "um"])
HELD_WORDS = set(w.lower() for w in CITIES_HELD) | {"lima", "accra", "doha", "riga", "hobart", "taipei"}


def novel_word(r, lo=2, hi=3):
    while True:
        w = "".join(r.choice(SYLLABLES) for _ in range(r.randint(lo, hi)))
        if w not in HELD_WORDS:
            return w


# Corpus options (set from the command line): the share of made-up training values (--novel), and the share of
# training expressions with small operands (--small-numbers, the fine-tuning stage only; when 0 it draws nothing,
# so the first stage's corpus does not depend on it).
OPTIONS = {"novel": 0.0, "small_numbers": 0.0, "tool_less": 0.0}


def novel_city(r):
    return novel_word(r).capitalize() if r.random() < 0.8 else novel_word(r).capitalize() + " " + novel_word(r, 1, 2).capitalize()


CONDITIONS = ["sunny", "cloudy", "rainy", "windy", "snowy", "foggy", "clear", "partly cloudy", "stormy", "drizzly"]

# ------------------------------------------------------------------ phrasings (train / held-out)

WEATHER_Q = {
    "train": ["What's the weather in {c}?", "What is the weather like in {c} today?", "How is the weather in {c}?",
              "Is it raining in {c} right now?", "weather {c}", "Tell me the weather in {c}.",
              "Can you check the weather in {c} for me?", "I'm going to {c}. What's the weather there?",
              "Do I need an umbrella in {c} today?", "How hot is it in {c}?", "Current conditions in {c}?",
              "What's it like outside in {c}?", "Do you know the weather in {c}?", "Is it sunny in {c}?",
              "Should I bring a coat to {c} today?", "Any rain in {c} at the moment?", "Weather report for {c}, please.",
              "How's the sky over {c} now?", "I need the weather for {c}.", "Check {c}'s weather.",
              "What are the conditions like in {c} right now?", "Is it warm in {c} today?", "Look up the weather in {c}.",
              "What's the temperature outside in {c}?", "Will I need sunglasses in {c} today?", "{c} weather?"],
    "held": ["Could you look up today's weather for {c}?", "Give me the forecast for {c} right now.",
             "Is it cold in {c} at the moment?"],
}
WEATHER_Q_UNIT = {
    "train": ["What's the temperature in {c} in {u}?", "Weather in {c}, in {u} please.", "How warm is it in {c}? Use {u}.",
              "Tell me the weather in {c} in degrees {u}.", "Check the weather in {c} and give it in {u}.",
              "How hot is it in {c}, in {u}?", "{c} weather in {u}?", "What's the weather in {c}? I prefer {u}."],
    "held": ["I'd like the weather for {c}, reported in {u}."],
}
MATH_Q = {
    "train": ["What is {e}?", "Calculate {e}.", "Compute {e} for me.", "{e} = ?", "What does {e} equal?",
              "Can you work out {e}?", "Please evaluate {e}.", "Quick math: {e}", "How much is {e}?",
              "I need the result of {e}.", "Do you know what {e} is?", "Work out {e}, please.", "{e}?",
              "What's {e}?", "Figure this out: {e}", "What do you get for {e}?", "Crunch the numbers: {e}",
              "Tell me the value of {e}.", "Could you compute {e}?", "I have a sum for you: {e}"],
    "held": ["Help me figure out {e}, please.", "Solve this: {e}", "What's the answer to {e}?"],
}
TIME_Q = {
    "train": ["What time is it in {z}?", "Current time in {z}?", "Tell me the time in the {z} time zone.",
              "What's the local time for {z}?", "time in {z}", "Can you check the time in {z}?",
              "What is the time right now in {z}?", "What hour is it in {z}?", "What does the clock say in {z}?",
              "Do you know the time in {z}?", "Show me the time for the {z} zone.", "I need the time in {z}.",
              "Is it morning or evening in {z} now?", "Look up the current time in the {z} time zone.",
              "Which hour is it over in {z}?", "Time check: {z}", "What's the clock time in {z}?",
              "Tell me the current hour for {z}.", "I'd like to know the local time in {z}.", "Clock in {z}?",
              "What time is it now in the {z} zone?", "Get me the time for {z}."],
    "held": ["Do you know the current hour in {z}?", "I need the clock time for the {z} zone."],
}
TIME_Q_CITY = ["What time is it in {c}?", "What's the time in {c} right now?", "Local time in {c}?"]
UNITS_Q = {
    "train": ["Convert {v} {f} to {t}.", "How many {t} is {v} {f}?", "What is {v} {f} in {t}?",
              "{v} {f} to {t}", "Please convert {v} {f} into {t}.", "How much is {v} {f} in {t}?",
              "Can you turn {v} {f} into {t}?", "I've got {v} {f}. What's that in {t}?", "{v} {f} in {t}, please.",
              "How many {t} are in {v} {f}?", "Change {v} {f} to {t}.", "I need {v} {f} converted to {t}.",
              "What's {v} {f} when converted to {t}?", "Give me {v} {f} in {t}.", "Convert this: {v} {f} -> {t}",
              "{v} {f} equals how many {t}?", "Could you tell me what {v} {f} is in {t}?", "Turn {v} {f} into {t}, please.",
              "My recipe says {v} {f}. How much is that in {t}?", "Is {v} {f} a lot of {t}? Convert it."],
    "held": ["I have {v} {f}; how much is that in {t}?", "Express {v} {f} in {t}, please."],
}
PATCH_Q = {
    "train": ["In {f}, change '{a}' to '{b}'.", "Replace '{a}' with '{b}' in {f}.", "Edit {f}: '{a}' should be '{b}'.",
              "Please update {f} so that '{a}' becomes '{b}'.", "In the file {f}, replace the line '{a}' with '{b}'.",
              "Fix {f}: change the line '{a}' into '{b}'.", "Could you swap '{a}' for '{b}' in {f}?",
              "Change '{a}' to '{b}' in the file {f}.", "{f}: replace '{a}' by '{b}'.", "Update the line '{a}' in {f} to '{b}'.",
              "I need {f} to say '{b}' instead of '{a}'.", "Rewrite '{a}' into '{b}' in {f}, please.",
              "Patch {f} so '{a}' reads '{b}'.", "Edit the file {f} and change '{a}' to '{b}'."],
    "held": ["Open {f} and turn '{a}' into '{b}'.", "Modify {f} by rewriting '{a}' as '{b}'."],
}
# Training phrasings are decorated at random (a greeting or lead-in, a closing word, lower case): held-out
# phrasings are used as written. Values are never changed (the call copies them).
LEAD_INS = ["Hi! ", "Hey, ", "Hello. ", "Quick question: ", "Please: ", "OK, next one. ", "One more thing. ", "Hmm, ",
            "Excuse me, ", "Sorry to bother you. ", "Good morning! ", "So, "]
CLOSINGS = [" Thanks!", " Thank you.", " Please.", " Thanks a lot.", " Cheers.", " :)", " Much appreciated."]


def decorate(r, q):
    x = r.random()
    if x < 0.2:
        q = r.choice(LEAD_INS) + (q[0].lower() + q[1:] if q[:1].isupper() and not q.startswith("I ") and not q.startswith("I'") else q)
    if r.random() < 0.15:
        q = q + r.choice(CLOSINGS)
    return q


def phrase(r, table, split, **values):
    q = r.choice(table[split]).format(**values)
    return decorate(r, q) if split == "train" else q


SMALL_TALK = {
    "train": [
        ("Hi!", "Hello! How can I help you today?"),
        ("Hello there.", "Hi! What can I do for you?"),
        ("Thanks!", "You're welcome!"),
        ("Thank you so much.", "Happy to help!"),
        ("Who are you?", "I am a small assistant model running in your browser. I can check the weather, do arithmetic, tell the time, convert units and edit files with tools."),
        ("What can you do?", "I can check the weather, do arithmetic, tell the time in a time zone, convert units and edit files, using the tools you give me."),
        ("How are you?", "I'm doing well, thanks for asking! How can I help?"),
        ("Good morning!", "Good morning! What can I do for you today?"),
        ("Tell me a joke.", "Why did the function return early? It had a bad case of the exceptions!"),
        ("Bye!", "Goodbye! Have a great day."),
        ("Are you a robot?", "I am a small language model, trained to help with a few simple tasks."),
        ("That's great, thanks.", "Glad I could help!"),
        ("Good night.", "Good night! Sleep well."),
        ("Can you help me?", "Of course! What do you need?"),
        ("Say something nice.", "You are doing great, and I'm glad to help you today."),
        ("What's your name?", "I'm a small assistant model. I don't have a name, but I'm happy to help."),
        ("Good afternoon.", "Good afternoon! How can I help?"),
        ("Tell me about yourself.", "I am a tiny language model that runs in your browser. I can use tools for weather, arithmetic, time, units and file edits."),
        ("I'm bored.", "Maybe I can help with something? Ask me about the weather, a sum or the time somewhere."),
        ("You're very helpful.", "Thank you! I'm glad to help."),
        ("See you later!", "See you! Have a nice day."),
        ("Nice work!", "Thanks! Anything else?"),
        ("Do you like music?", "I can't listen to music, but I'm happy to help with something else."),
        ("Hello!", "Hello! What can I do for you?"),
        ("Great, that's all.", "Glad I could help. Goodbye!"),
    ],
    "held": [
        ("Hey, what's up?", "Not much! How can I help you?"),
        ("Nice to meet you.", "Nice to meet you too! What can I do for you?"),
        ("Thanks a lot for the help!", "You're welcome! Anything else?"),
    ],
}
SMALL_TALK_THINK = ["The user is just chatting. No tool is needed; I will reply directly.",
                    "This is small talk, so I can answer without calling a tool.",
                    "A friendly message. I don't need any tool for this."]

SYSTEM_PROMPTS = ["You are a helpful assistant.", "You are a concise assistant.", "You are a helpful assistant running in the browser.",
                  "Answer briefly and use tools when they help.", "You are a friendly assistant. Be brief."]
DEVELOPER_PROMPTS = ["Use the tools provided when a question needs live data.", "Keep answers short.", "Reply in plain text."]

# ------------------------------------------------------------------ tasks


def num(x):
    """A JSON number as both Python and JavaScript print it: integral floats as ints, else up to 2 decimals."""
    x = round(float(x), 2)
    return int(x) if x == int(x) else x


def fmt(x):
    return json.dumps(num(x))


def make_weather(r, split):
    city = r.choice(CITIES_TRAIN if split == "train" else CITIES_HELD).replace("_", " ")
    if split == "train" and r.random() < OPTIONS["novel"]:
        city = novel_city(r)
    with_unit = r.random() < 0.3
    unit = r.choice(["celsius", "fahrenheit"])
    if with_unit:
        q = phrase(r, WEATHER_Q_UNIT, split, c=city, u=unit)
        args = {"location": city, "unit": unit}
    else:
        q = phrase(r, WEATHER_Q, split, c=city)
        args = {"location": city}
        unit = "celsius"
    temp = r.randint(-10, 35) if unit == "celsius" else r.randint(14, 95)
    cond = r.choice(CONDITIONS)
    think = r.choice([
        f"The user wants the current weather in {city}. I should call get_weather.",
        f"I need the weather for {city}. The get_weather tool can look it up.",
        f"The user asks about the weather in {city}. I will use get_weather" + (f" with the unit {unit}." if with_unit else "."),
    ])
    comment = r.choice([f"Let me check the weather in {city}.", f"I'll look up the weather in {city}.", "Checking the weather now."])
    result = json.dumps({"location": city, "temperature": temp, "unit": unit, "condition": cond}, ensure_ascii=False)
    deg = "°C" if unit == "celsius" else "°F"
    final = r.choice([
        f"It is {temp}{deg} and {cond} in {city} right now.",
        f"The weather in {city} is {cond} with a temperature of {temp}{deg}.",
        f"In {city} it's currently {temp}{deg} and {cond}.",
    ])
    return q, think, comment, ("get_weather", args), result, final


def expression(r, small=False):
    ops = ["+", "-", "*", "/"]
    kind = r.random()
    a, b, c = r.randint(2, 999), r.randint(2, 99), r.randint(2, 50)
    op = r.choice(ops)
    if op == "/":
        a = b * r.randint(2, 60)
    if small:
        # Operands of one or two digits (0-20), as people type them ("What is 2 + 3?").
        a, b, c = r.randint(0, 20), r.randint(1, 20), r.randint(0, 20)
        if op == "/":
            a = b * r.randint(0, 10)
    if kind < 0.7:
        e, v = f"{a} {op} {b}", eval(f"{a} {op} {b}")
    else:
        op2 = r.choice(["+", "-", "*"])
        e = f"({a} {op2} {b}) * {c}" if r.random() < 0.5 else f"{a} {op2} {b} * {c}"
        v = eval(e)
    return e, num(v)


def make_math(r, split, held_exprs):
    while True:
        e, v = expression(r, split == "train" and OPTIONS["small_numbers"] > 0 and r.random() < OPTIONS["small_numbers"])
        if (e in held_exprs) == (split == "held"):
            break
        if split == "held":
            held_exprs.add(e)
            break
    q = phrase(r, MATH_Q, split, e=e)
    think = r.choice([f"The user wants {e}. I'll use the calculator to get it exactly.",
                      f"I need to compute {e}. The calculator tool can do it.",
                      f"Arithmetic: {e}. Let me call calculator."])
    comment = r.choice(["Let me calculate that.", f"I'll compute {e}.", "Calculating."])
    result = json.dumps({"result": v})
    final = r.choice([f"{e} = {json.dumps(v)}.", f"The result of {e} is {json.dumps(v)}.", f"{e} equals {json.dumps(v)}."])
    return q, think, comment, ("calculator", {"expression": e}), result, final


def make_time(r, split):
    if split == "train" and r.random() < 0.25:
        city = r.choice(sorted(CITY_ZONE))
        zone = CITY_ZONE[city]
        q = decorate(r, r.choice(TIME_Q_CITY).format(c=city))
        place = city
    else:
        zone = r.choice(ZONES_TRAIN if split == "train" else ZONES_HELD)
        if split == "train" and r.random() < OPTIONS["novel"]:
            zone = r.choice(["Europe", "Asia", "America", "Africa", "Australia", "Pacific"]) + "/" + novel_city(r).replace(" ", "_")
        q = phrase(r, TIME_Q, split, z=zone)
        place = zone
    h, m = r.randint(0, 23), r.randint(0, 59)
    t = f"{h:02d}:{m:02d}"
    think = r.choice([f"The user wants the current time in {place}. The time zone is {zone}; I'll call get_time.",
                      f"I need the local time for {zone}. get_time can tell me."])
    comment = r.choice([f"Let me check the time in {place}.", "I'll look up the current time.", "Checking the clock."])
    result = json.dumps({"timezone": zone, "time": t})
    final = r.choice([f"It is {t} in {place} right now.", f"The current time in {place} is {t}.", f"Right now it's {t} in {place}."])
    return q, think, comment, ("get_time", {"timezone": zone}), result, final


def make_units(r, split):
    f, t, k = r.choice(UNIT_PAIRS if split == "train" else UNIT_PAIRS_HELD)
    if split == "train" and r.random() < OPTIONS["novel"] * 0.3:
        # Made-up units, so that the call copies the unit names from the prompt.
        f, t, k = novel_word(r, 1, 2) + "s", novel_word(r, 1, 2) + "s", r.choice([2.0, 3.0, 0.5, 10.0, 12.0, 100.0, 0.25])
    v = num(r.choice([r.randint(1, 500), r.randint(1, 100) + r.choice([0.5, 0.25, 0.75, 0.1])]))
    if k is None:
        out = v * 9 / 5 + 32 if f == "celsius" else (v - 32) * 5 / 9
    else:
        out = v * k
    out = num(out)
    vs = json.dumps(v)
    q = phrase(r, UNITS_Q, split, v=vs, f=f, t=t)
    think = r.choice([f"The user wants {vs} {f} in {t}. I'll call convert_units.",
                      f"A unit conversion from {f} to {t} for the value {vs}. convert_units will do it."])
    comment = r.choice([f"Let me convert {vs} {f} to {t}.", "Converting now.", "I'll run the conversion."])
    result = json.dumps({"value": out, "unit": t})
    final = r.choice([f"{vs} {f} is {json.dumps(out)} {t}.", f"That is {json.dumps(out)} {t}.", f"{vs} {f} equals {json.dumps(out)} {t}."])
    return q, think, comment, ("convert_units", {"value": v, "from": f, "to": t}), result, final


def make_patch(r, split):
    path = r.choice(FILES_TRAIN if split == "train" else FILES_HELD)
    a, b = r.choice(EDITS_TRAIN if split == "train" else EDITS_HELD)
    if split == "train" and r.random() < OPTIONS["novel"]:
        path = novel_word(r) + r.choice([".txt", ".md", ".py", ".js", ".yaml", ".json"])
    if split == "train" and r.random() < OPTIONS["novel"]:
        w1, w2 = novel_word(r, 1, 3), novel_word(r, 1, 3)
        a, b = r.choice([(f"{w1} {w2}", f"{w2} {w1}"), (f"{w1} = {r.randint(1, 99)}", f"{w1} = {r.randint(1, 99)}"), (w1, w2), (f"{w1}: {w2}", f"{w1}: {novel_word(r, 1, 2)}")])
    q = phrase(r, PATCH_Q, split, f=path, a=a, b=b)
    patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n-{a}\n+{b}\n*** End Patch"
    think = r.choice([f"The user wants to edit {path}: replace '{a}' with '{b}'. I'll write a patch for apply_patch.",
                      f"An edit to {path}. I will call apply_patch with a patch that removes '{a}' and adds '{b}'."])
    comment = r.choice([f"I'll update {path}.", f"Editing {path} now.", "Let me apply that change."])
    result = r.choice([f"Done! Updated {path}.", f"Success. Updated the following files:\nM {path}"])
    final = r.choice([f"I changed '{a}' to '{b}' in {path}.", f"Done: {path} now says '{b}' instead of '{a}'.",
                      f"{path} is updated: '{a}' is now '{b}'."])
    return q, think, comment, ("apply_patch", {"input": patch}), result, final


TASKS = ["weather", "math", "time", "units", "patch", "chat"]
TASK_WEIGHTS = [0.2, 0.19, 0.16, 0.17, 0.16, 0.12]


def make_task(r, kind, split, held_exprs):
    if kind == "weather":
        return make_weather(r, split)
    if kind == "math":
        return make_math(r, split, held_exprs)
    if kind == "time":
        return make_time(r, split)
    if kind == "units":
        return make_units(r, split)
    if kind == "patch":
        return make_patch(r, split)
    q, a = r.choice(SMALL_TALK[split])
    return q, r.choice(SMALL_TALK_THINK), None, None, None, a


# ------------------------------------------------------------------ rendering (chatml-template.ts)


def tojson(v):
    return json.dumps(v, ensure_ascii=False)


def render_system(messages, tools):
    out = ""
    first_sys = messages and messages[0]["role"] in ("system", "developer")
    if tools:
        out += "<|im_start|>system\n"
        if first_sys:
            out += messages[0]["content"] + "\n\n"
        out += "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>"
        for t in tools:
            out += "\n" + tojson(t)
        out += '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
    elif first_sys:
        out += "<|im_start|>system\n" + messages[0]["content"] + "<|im_end|>\n"
    return out


def assistant_body(m):
    """What follows '<|im_start|>assistant\\n' for a history turn, through '<|im_end|>'."""
    out = ""
    if m.get("reasoning_content"):
        out += "<think>\n" + m["reasoning_content"] + "\n</think>\n\n"
    out += m["content"]
    for i, tc in enumerate(m.get("tool_calls") or []):
        if (i == 0 and m["content"]) or i > 0:
            out += "\n"
        f = tc["function"]
        args = f["arguments"] if isinstance(f["arguments"], str) else tojson(f["arguments"])
        out += '<tool_call>\n{"name": "' + f["name"] + '", "arguments": ' + args + "}\n</tool_call>"
    return out + "<|im_end|>"


def render_segments(messages, tools, trained_turns, no_think_last):
    """Segments [text, trained] of the conversation. trained_turns: indices of assistant messages whose body is
    trained. no_think_last: the last assistant message is generated with enable_thinking false (the prompt
    pre-fills an empty think block; its body has no reasoning)."""
    segs = [[render_system(messages, tools), False]]
    n = len(messages)
    for i, m in enumerate(messages):
        role = m["role"]
        if role in ("system", "developer") and i == 0:
            continue
        if role in ("user", "system", "developer"):
            segs.append(["<|im_start|>" + ("user" if role == "user" else "system") + "\n" + m["content"] + "<|im_end|>\n", False])
        elif role == "assistant":
            head = "<|im_start|>assistant\n"
            if no_think_last and i == n - 1:
                head += "<think>\n\n</think>\n\n"
            segs.append([head, False])
            segs.append([assistant_body(m), i in trained_turns])
            segs.append(["\n", False])
        elif role == "tool":
            s = ""
            if i == 0 or messages[i - 1]["role"] != "tool":
                s += "<|im_start|>user"
            s += "\n<tool_response>\n" + m["content"] + "\n</tool_response>"
            if i == n - 1 or messages[i + 1]["role"] != "tool":
                s += "<|im_end|>\n"
            segs.append([s, False])
    # merge neighbours with the same flag
    out = [segs[0]]
    for t, f in segs[1:]:
        if not t:
            continue
        if len(out) > 1 and out[-1][1] == f:
            out[-1][0] += t
        else:
            out.append([t, f])
    return out


def render_spec(messages, tools, no_think_last):
    if no_think_last:
        last = messages[-1]
        return {"messages": messages[:-1], "tools": tools, "add_generation_prompt": True, "enable_thinking": False,
                "suffix": assistant_body(last) + "\n"}
    return {"messages": messages, "tools": tools, "add_generation_prompt": False, "enable_thinking": True, "suffix": ""}


def choose_tools(r, needed, variants, split):
    names = [n for n in variants if n != needed]
    k = r.choice([0, 1, 1, 2, 2, 3, 4])
    chosen = r.sample(names, k)
    if needed:
        chosen.append(needed)
    r.shuffle(chosen)
    # The canonical declaration for held-out prompts; variants in training.
    return [variants[n][0] if split == "held" or r.random() < 0.5 else r.choice(variants[n]) for n in chosen]


def system_messages(r):
    x = r.random()
    if x < 0.45:
        return []
    if x < 0.85:
        return [{"role": "system", "content": r.choice(SYSTEM_PROMPTS)}]
    return [{"role": "system", "content": "Developer instructions:\n" + r.choice(DEVELOPER_PROMPTS)}]


def group_header(r, variants):
    """A system block shared by a group of conversations: system messages and the tools on offer."""
    x = r.random()
    if x < 0.06 or (OPTIONS["tool_less"] > 0 and r.random() < OPTIONS["tool_less"]):
        names = []
    else:
        names = r.sample(list(TASK_TOOL.values()), r.choice([1, 1, 2, 2, 3, 4, 5]))
        names += r.sample([n for n in variants if n not in TASK_TOOL.values()], r.choice([0, 0, 1, 1, 2]))
    r.shuffle(names)
    tools = [r.choice(variants[n]) if r.random() < 0.5 else variants[n][0] for n in names]
    return system_messages(r), tools


def conversation(r, split, variants, held_exprs, system, tools, n_tasks):
    offered = {t["function"]["name"] for t in tools}
    allowed = [(k, w) for k, w in zip(TASKS, TASK_WEIGHTS) if k == "chat" or TASK_TOOL[k] in offered]
    kinds = [r.choices([k for k, _ in allowed], [w for _, w in allowed])[0] for _ in range(n_tasks)]
    messages = list(system)
    trained = set()
    no_think_last = False
    call_id = 0
    for ti, kind in enumerate(kinds):
        q, think, comment, call, result, final = make_task(r, kind, split, held_exprs)
        messages.append({"role": "user", "content": q})
        last_task = ti == n_tasks - 1
        # Earlier tasks' reasoning is replayed (as with previous_response_id) most of the time.
        keep_reasoning = last_task or r.random() < 0.7
        if call is None:
            if last_task and r.random() < 0.1:
                no_think_last = True
                keep_reasoning = False
            m = {"role": "assistant", "content": final}
            if keep_reasoning:
                m["reasoning_content"] = think
            messages.append(m)
            if keep_reasoning or no_think_last:
                trained.add(len(messages) - 1)
            continue
        name, args = call
        content = comment if r.random() < 0.5 else ""
        m = {"role": "assistant", "content": content,
             "tool_calls": [{"id": f"call_{call_id}", "type": "function", "function": {"name": name, "arguments": args}}]}
        call_id += 1
        if keep_reasoning:
            m["reasoning_content"] = think
        messages.append(m)
        if keep_reasoning:
            trained.add(len(messages) - 1)
        messages.append({"role": "tool", "content": result, "tool_call_id": f"call_{call_id - 1}", "name": name})
        m2 = {"role": "assistant", "content": final}
        # After the tool's answer: a short thought, then the final answer.
        after = r.choice(["The tool answered. I can reply now.", "I have the result, so I'll answer.", "Got the tool's answer; now the final reply."])
        if keep_reasoning or last_task:
            m2["reasoning_content"] = after
            trained.add(len(messages))
        messages.append(m2)
    segs = render_segments(messages, tools, trained, no_think_last)
    return {"prefix": segs[0][0], "segments": segs[1:], "render": render_spec(messages, tools, no_think_last), "kinds": kinds}


def eval_item(r, variants, held_exprs, kind):
    q, think, comment, call, result, final = make_task(r, kind, "held", held_exprs)
    needed = TASK_TOOL.get(kind)
    tools = choose_tools(r, needed, variants, "held")
    if kind == "chat" and not tools:
        tools = [variants["get_weather"][0]]
    messages = system_messages(r) + [{"role": "user", "content": q}]
    return {"kind": kind, "messages": messages, "tools": tools,
            "expected": None if call is None else {"name": call[0], "arguments": call[1]},
            "tool_result": result}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--train", type=int, default=12000)
    ap.add_argument("--eval-per-task", type=int, default=20)
    ap.add_argument("--group", type=int, default=8, help="conversations per shared system block")
    ap.add_argument("--out", default=".tmp/toy")
    ap.add_argument("--novel", type=float, default=0.0, help="share of training values replaced by made-up ones")
    ap.add_argument("--train-seed", type=int, default=None, help="seed of the training conversations (default: continue from --seed after the held-out set)")
    ap.add_argument("--small-numbers", type=float, default=0.0, help="share of training expressions with operands 0-20")
    ap.add_argument("--tool-less", type=float, default=0.0,
                    help="extra share of groups with no tools on offer (chats as a plain client sends them)")
    a = ap.parse_args()
    OPTIONS["novel"] = a.novel
    OPTIONS["small_numbers"] = a.small_numbers
    OPTIONS["tool_less"] = a.tool_less
    os.makedirs(a.out, exist_ok=True)
    r = random.Random(a.seed)
    variants = tool_variants()
    # Held-out arithmetic expressions are drawn first, so training never sees them.
    held_exprs = set()
    evals = []
    for kind in TASKS:
        for _ in range(a.eval_per_task):
            evals.append(eval_item(r, variants, held_exprs, kind))
    with open(os.path.join(a.out, "eval.jsonl"), "w") as f:
        for e in evals:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    # Conversations come in groups that share one system block (system message and tools), so that training
    # can compute that prefix once per group.
    if a.train_seed is not None:
        # Other training conversations with the same held-out prompts (and held-out expressions).
        r = random.Random(a.train_seed)
    with open(os.path.join(a.out, "train.jsonl"), "w") as f:
        for i in range(a.train):
            if i % a.group == 0:
                system, tools = group_header(r, variants)
                # One task count per group keeps the group's bodies of similar length (little padding).
                n_tasks = r.choices([1, 2, 3], [0.65, 0.25, 0.1])[0]
            c = conversation(r, "train", variants, held_exprs, system, tools, n_tasks)
            c["group"] = i // a.group
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(f"wrote {a.train} training conversations and {len(evals)} held-out prompts to {a.out}")


if __name__ == "__main__":
    main()
