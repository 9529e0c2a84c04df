"""A scripted stand-in for a coding agent (not a model).

`scripted-careful-1` makes the right fix for the example's tasks; `scripted-hasty-1` gets the
clamp fix wrong about half the time. It reads the prompt on stdin and writes what it "used" to
$ARMBENCH_USAGE_FILE, stating no cost, as a tool without a price would.
"""

import json
import os
import random
import sys
from pathlib import Path

prompt = sys.stdin.read()
model = os.environ.get("ARMBENCH_MODEL", "")
calc = Path("calc.py")
source = calc.read_text()
if "clamp" in prompt:
    if model == "scripted-hasty-1" and random.random() < 0.5:
        source = source.replace("if x >= hi:", "if x > hi:")  # still returns hi - 1: wrong
    else:
        source = source.replace("if x >= hi:\n        return hi - 1", "if x > hi:\n        return hi")
if "negative" in prompt:
    source = source.replace(
        "    if not text.isdigit():",
        '    digits = text[1:] if text.startswith("-") else text\n    if not digits.isdigit():',
    )
calc.write_text(source)
usage = {"tokens": {"input": 40 * len(prompt.split()), "output": 120}, "model": model}
Path(os.environ["ARMBENCH_USAGE_FILE"]).write_text(json.dumps(usage))
