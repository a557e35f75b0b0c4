#!/usr/bin/env python3
"""Every exclusion in every cargo-mutants config still matches a mutant of today's code.

An exclusion names an equivalent mutant by its text (file:line:column, the replacement and the
function). When the code moves, an exclusion anchored by a line goes stale and matches nothing,
and the mutant it was written for comes back as a survivor; one anchored by a function name
alone could go on hiding a new mutant in that function. This check lists every mutant of the
workspace (`cargo mutants --list --no-config --workspace`, no build: a second or two) and fails,
naming them, on exclusions that match none.

    python3 .ci/mutants-exclusions.py [CARGO_MUTANTS]
"""

import pathlib
import re
import subprocess
import sys
import tomllib

root = pathlib.Path(__file__).resolve().parent.parent
program = sys.argv[1] if len(sys.argv) > 1 else "cargo-mutants"
listing = subprocess.run(
    [program, "mutants", "--list", "--no-config", "--workspace"],
    cwd=root,
    check=True,
    capture_output=True,
    text=True,
).stdout.splitlines()
if len(listing) < 100:
    sys.exit(f"cargo mutants listed only {len(listing)} mutants: {listing[:5]}")

stale = []
counted = 0
for config in sorted((root / ".cargo").glob("mutants*.toml")):
    settings = tomllib.loads(config.read_text())
    for pattern in settings.get("exclude_re", []):
        counted += 1
        regex = re.compile(pattern)
        matched = [m for m in listing if regex.search(m)]
        if not matched:
            stale.append(f"{config.relative_to(root)}: {pattern}")

if stale:
    print("exclusions that match no current mutant (the code moved; re-anchor or remove them):")
    for line in stale:
        print("  " + line)
    sys.exit(1)
print(f"{counted} exclusions, each matching a current mutant (of {len(listing)})")
