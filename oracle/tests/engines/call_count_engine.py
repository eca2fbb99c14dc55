#!/usr/bin/env python3
"""A small external engine for `bpspec oracle check --engine-cmd` (docs/conformance-kit.md).

Reads one breakpoint scenario (docs/scenario.md) on stdin, writes its observations on stdout,
one JSON object per line. It implements only call_count breakpoints (trace_pattern with the
flags ["call_count"], trace_info call_count, calls, trace_flags) and exits 3 on anything else.

    call_count_engine.py correct   the behaviour of ERTS for that subset
    call_count_engine.py wrong     a deliberate bug: `restart` keeps the count instead of zeroing it
"""
import json
import re
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "correct"


def unsupported(what):
    print(f"call_count_engine.py: unsupported: {what}", file=sys.stderr)
    sys.exit(3)


sc = json.load(sys.stdin)
if sc.get("sessions"):
    unsupported("sessions")


def plain(x):
    """Integers, atoms and the n-forms only: terms (lists, tuples, expressions) are unsupported."""
    return isinstance(x, (int, str))


for m in sc["modules"]:
    for f in m["functions"]:
        if "base_arg" in f or "base_match" in f:
            unsupported("base clauses on a term")
        for st in (f.get("base") or []) + f.get("body", []):
            if st.get("catch"):
                unsupported("catch")
            vals = st.get("args", []) + [st[k] for k in ("return", "raise") if k in st]
            if not all(plain(v) for v in vals):
                unsupported("terms and expressions")
for o in sc["ops"]:
    if "call" in o and not all(plain(a) for a in o["call"].get("args", [])):
        unsupported("terms as call arguments")

# Declared functions by (module, name, arity).
decl = {}
for m in sc["modules"]:
    for f in m["functions"]:
        decl[(m["name"], f["name"], f.get("arity", 0))] = (m["name"], f)


def target(mod, s):
    """A call step's target: `F/A` (local, in mod) or `M:F/A`."""
    if ":" in s:
        mod, s = s.split(":", 1)
    name, arity = s.rsplit("/", 1)
    return (mod, name, int(arity))


# The compiler keeps exported functions, those reachable from them, and module_info/0,1.
loaded = set()
todo = [k for k, (_, f) in decl.items() if f.get("exported")]
while todo:
    k = todo.pop()
    if k in loaded:
        continue
    loaded.add(k)
    mod, f = decl[k]
    for st in (f.get("base") or []) + f.get("body", []):
        t = st.get("call") or st.get("tail_call")
        if t:
            todo.append(target(mod, t))
for m in sc["modules"]:
    loaded.add((m["name"], "module_info", 0))
    loaded.add((m["name"], "module_info", 1))

counters = {}  # mfa -> [count, paused]


def matches(pattern, k):
    m = re.fullmatch(r"([^:]+):([^/]+)/(.+)", pattern)
    if not m:
        unsupported(f"pattern {pattern}")
    parts = [m.group(1), m.group(2), m.group(3)]
    have = [k[0], k[1], str(k[2])]
    return all(p == "_" or p == h for p, h in zip(parts, have))


def arg(a, n):
    if isinstance(a, int):
        return a
    s = a.replace(" ", "")
    if s == "n":
        return n
    if s.startswith("n+"):
        return n + int(s[2:])
    if s.startswith("n-"):
        return n - int(s[2:])
    unsupported(f"argument {a}")


class Raise(Exception):
    pass


def call(k, args):
    """Run function k; its return value, or Raise."""
    while True:
        c = counters.get(k)
        if c is not None and not c[1]:
            c[0] += 1
        if k[1] == "module_info":
            return "module_info"
        mod, f = decl[k]
        n = args[0] if args else 0
        steps = f["base"] if f.get("base") is not None and args and args[0] == 0 else f.get("body", [])
        nxt = None
        for st in steps:
            if "call" in st:
                a = [arg(x, n) for x in st.get("args", [])]
                for _ in range(st.get("times", 1)):
                    call(target(mod, st["call"]), a)
            elif "tail_call" in st:
                nxt = (target(mod, st["tail_call"]), [arg(x, n) for x in st.get("args", [])])
            elif "return" in st:
                return st["return"]
            elif "raise" in st:
                raise Raise(st["raise"])
        if nxt is None:
            return "ok"
        k, args = nxt


out = []
for i, op in enumerate(sc["ops"]):
    (kind, o), = op.items()
    if kind == "trace_pattern":
        if o["flags"] != ["call_count"] or o.get("session", "legacy") != "legacy":
            unsupported(f"trace_pattern flags {o['flags']}")
        spec = o["spec"]
        hit = sorted(k for k in loaded if matches(o["pattern"], k))
        for k in hit:
            c = counters.get(k)
            if spec is True:
                counters[k] = [0, False]
            elif spec is False:
                counters.pop(k, None)
            elif spec == "pause" and c is not None:
                c[1] = True
            elif spec == "restart" and c is not None:
                if MODE != "wrong":
                    c[0] = 0
                c[1] = False
            elif spec not in ("pause", "restart"):
                unsupported(f"spec {spec}")
        out.append({"op": i, "trace_pattern": len(hit)})
    elif kind == "call":
        k = target("", o["mfa"])
        last = None
        for _ in range(o.get("times", 1)):
            try:
                last = {"op": i, "return": call(k, o.get("args", []))}
            except Raise as e:
                last = {"op": i, "raise": e.args[0]}
        out.append(last)
    elif kind == "trace_info":
        if o["item"] != "call_count":
            unsupported(f"trace_info item {o['item']}")
        k = target("", o["mfa"])
        if k not in loaded:
            v = "undefined"
        elif k in counters:
            v = counters[k][0]
        else:
            v = False
        out.append({"op": i, "trace_info": {"item": "call_count", "value": v}})
    elif kind == "trace_flags":
        out.append({"op": i, "trace_flags": 1})
    else:
        unsupported(f"op {kind}")

for o in out:
    print(json.dumps(o, separators=(",", ":")))
