# Every corpus program (tests/corpus/*.py, tests/corpus-gpu/*.py) run through TinyJit with new inputs: each program's
# constant leaf tensors become the inputs of a function that runs the rest of the program, the function is called
# four times through TinyJit (the first call runs, the second captures, the third and fourth replay the captured
# kernels with the new input buffers) and each call's values are compared with the same function called without the
# JIT on the same inputs. Run by tests/app/test_cli.cpp on CPU, INTERP and VULKAN; prints one line per program (ok,
# skipped with the reason, FAIL with the first difference, KNOWN BUG) and, when nothing failed,
# "jit corpus ok: N programs, M skipped" (N wrapped and checked, M skipped), then ", K known JIT bugs" if K > 0.
# `tinyscope run tests/app/jit_corpus.py -- 145_ corpus-gpu/` runs the programs whose names contain an argument.
#
# How a program is wrapped (its source is rewritten with `ast`, not edited by hand):
# - a constant leaf, `Tensor(<python data>)`, `Tensor.arange/ones/zeros/full/eye/linspace(...)`, wherever it is built
#   (top level, a helper, a loop, a class), becomes input k, k counting the constants in the order the program builds
#   them; a first run of the rewritten program on the original values (the probe) records each input's values, dtype
#   and device, and must give the program's recorded result (NN_name.expected.json), which checks the rewrite;
# - a data read, `t.tolist()`, `t.item()`, `t.numpy()`, becomes a copy of t into a fresh buffer (realized where the
#   program reads it, so later in-place updates do not change it; a copy, as an input or a view of one returned as is
#   would be the capture's buffer in every replay) that the function returns, and a placeholder in the program's
#   Python values; the reads happen after the call, the placeholders are filled from the returned tensors (indexing,
#   slicing, len, iteration and arithmetic on read values are replayed on the read values);
# - asserts and prints are dropped (they check or show the original values);
# - a leading `Tensor.manual_seed(n)` is moved out of the function: the generator is seeded before the run without the
#   JIT and again before the JIT's run, so random draws inside the function (rand, dropout, default nn init) must give
#   the same values call by call, while replays must draw new numbers as the calls without the JIT do.
# New inputs for call c: floats are the original values permuted and scaled by a per-call factor in (0, 1) (signs,
# (0, 1) and (-1, 1) ranges and positivity are kept, so log, sqrt, asin, atanh, binary cross entropy stay defined);
# ints and bools are drawn from the original values (indices stay in range, divisors nonzero, sums change), an int
# constant (full, zeros) moves by the call's number.
# Checked per program: the JIT's values equal the values without the JIT (ints and bools exactly, floats within
# rtol 1e-5, atol 1e-6, NaN equal to NaN) for every call, the read values and then the inputs' values after the call
# (an input the program updates in place must be updated alike); the second call captured (`captured` is set); the
# program's Python ran only for the first two calls (the later ones were replays); and where the values without the
# JIT change from call to call, the JIT's change too (a replay that kept the capture's inputs would show here).
# Programs that cannot be wrapped are found from their source (Variables, graph or schedule inspection, Tensor.empty,
# reseeding mid-program), from the probe (a read value deciding Python control flow) or from the runs without the JIT
# (values that do not change from call to call, where a stale replay could not show) and printed as skipped with the
# reason. Programs whose library calls read tensor data (masked_select, nonzero: their sizes come from the values) are
# listed in CAPTURE_READS: such a program must raise the reference's JitError during the capture ("cannot access tensor
# data during JIT capture"), and any other program raising it fails.
import ast, json, math, os, sys, traceback
import numpy as np
from tinygrad import Tensor, TinyJit, dtypes
from tinygrad.engine.jit import JitError

HERE = os.path.dirname(os.path.abspath(__file__))
CORPORA = [os.path.join(HERE, "..", "corpus"), os.path.join(HERE, "..", "corpus-gpu")]
NCALLS = 4
SCALES = [0.9, 0.75, 0.6, 0.85]  # per-call factor of float inputs
RTOL, ATOL = 1e-5, 1e-6
# the probe against the program's recorded result (the reference tinygrad on CPU): looser, devices round differently
EXPECTED_RTOL, EXPECTED_ATOL = 1e-3, 1e-4

# programs whose library calls read tensor data, which a JIT capture refuses (JitError): program -> what reads
CAPTURE_READS = {
  "79_scatter_rearrange": "masked_select and nonzero read the mask to size their results",
}

# JIT results that differ from the results without the JIT on this engine (engine bugs the reference tinygrad does
# not have): program -> (what its failure must say, the bug and a repro). A program listed here is still run, its
# line says KNOWN BUG instead of FAIL while it fails that way, and FAIL when it fails otherwise or passes (remove it
# then). Under the reference tinygrad the list does not apply. Empty: every program gives the plain run's values.
KNOWN_JIT_BUGS = {}
if "tinyscope" not in sys.modules: KNOWN_JIT_BUGS = {}

CREATORS = {"arange", "ones", "zeros", "full", "eye", "linspace"}
READS = {"tolist", "item", "numpy"}

class NotDeferrable(Exception): pass
class Skip(Exception): pass

# ---- placeholders for read values: filled after the call from the values of the returned tensors ----
class Deferred:
  def __init__(self, fn, shape=None): self.fn, self.shape = fn, shape
  def __getitem__(self, k):
    shape = None
    if self.shape is not None and len(self.shape):
      if isinstance(k, int): shape = self.shape[1:]
      elif isinstance(k, slice): shape = (len(range(*k.indices(self.shape[0]))),) + tuple(self.shape[1:])
    return Deferred(lambda v, k=k: self.fn(v)[k], shape)
  def __len__(self):
    if self.shape is None or not len(self.shape): raise NotDeferrable("len() of a read value of unknown length")
    return self.shape[0]
  def __iter__(self): return (self[i] for i in range(len(self)))
  def __bool__(self): raise NotDeferrable("a read value decides Python control flow")
  def __index__(self): raise NotDeferrable("a read value is used as a Python index")
  def __float__(self): raise NotDeferrable("a read value is converted in Python")
  def __int__(self): raise NotDeferrable("a read value is converted in Python")
  def __hash__(self): raise NotDeferrable("a read value is hashed")
  def __getattr__(self, name): raise NotDeferrable(f"a read value's .{name} is used in Python")
def _binop(op, rev=False):
  def f(self, other):
    if rev: return Deferred(lambda v: op(resolve(other, v), self.fn(v)))
    return Deferred(lambda v: op(self.fn(v), resolve(other, v)))
  return f
for _name, _op in [("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
                   ("truediv", lambda a, b: a / b), ("floordiv", lambda a, b: a // b), ("mod", lambda a, b: a % b),
                   ("pow", lambda a, b: a ** b)]:
  setattr(Deferred, f"__{_name}__", _binop(_op))
  setattr(Deferred, f"__r{_name}__", _binop(_op, rev=True))
for _name, _op in [("eq", lambda a, b: a == b), ("ne", lambda a, b: a != b), ("lt", lambda a, b: a < b),
                   ("le", lambda a, b: a <= b), ("gt", lambda a, b: a > b), ("ge", lambda a, b: a >= b)]:
  setattr(Deferred, f"__{_name}__", _binop(_op))
Deferred.__neg__ = lambda self: Deferred(lambda v: -self.fn(v))
Deferred.__abs__ = lambda self: Deferred(lambda v: abs(self.fn(v)))

def resolve(x, vals):
  if isinstance(x, Deferred): return x.fn(vals)
  if isinstance(x, dict): return {k: resolve(v, vals) for k, v in x.items()}
  if isinstance(x, list): return [resolve(v, vals) for v in x]
  if isinstance(x, tuple): return tuple(resolve(v, vals) for v in x)
  return x

# ---- comparing results: ints/bools/strings exactly, floats within a tolerance, NaN equal to NaN ----
def mismatch(a, b, rtol, atol, path=""):
  if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
    if a.shape != b.shape or a.dtype != b.dtype: return f"{path}: {a.dtype}{list(a.shape)} != {b.dtype}{list(b.shape)}"
    same = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True) if a.dtype.kind == "f" else a == b
    if same.all(): return None
    i = tuple(int(x) for x in np.argwhere(~same)[0])
    return f"{path}{list(i)}: {a[i].item()!r} != {b[i].item()!r}"
  if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
    if len(a) != len(b): return f"{path}: length {len(a)} != {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
      if (m := mismatch(x, y, rtol, atol, f"{path}[{i}]")): return m
    return None
  if isinstance(a, dict) and isinstance(b, dict):
    if sorted(a) != sorted(b): return f"{path}: keys {sorted(a)} != {sorted(b)}"
    for k in a:
      if (m := mismatch(a[k], b[k], rtol, atol, f"{path}[{k!r}]")): return m
    return None
  if isinstance(a, float) or isinstance(b, float):
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
      return f"{path}: {a!r} != {b!r}"
    if math.isnan(a) and math.isnan(b): return None
    if math.isinf(a) or math.isinf(b): return None if a == b else f"{path}: {a!r} != {b!r}"
    return None if abs(a - b) <= atol + rtol * abs(b) else f"{path}: {a!r} != {b!r}"
  if type(a) is not type(b) or a != b: return f"{path}: {a!r} != {b!r}"
  return None

def short(x, n=300):
  # one line, at most n characters
  s = repr(x.tolist() if isinstance(x, np.ndarray) else [short_py(v) for v in x] if isinstance(x, list) else x)
  return s if len(s) <= n else s[:n] + "..."
def short_py(x): return x.tolist() if isinstance(x, np.ndarray) else x

# ---- the rewrite ----
def is_tensor_attr(f, names):
  return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "Tensor" and f.attr in names

def is_creator(node):
  if any(k.arg == "buffer" for k in node.keywords): return False  # full(buffer=False): a broadcast const on purpose
  if isinstance(node.func, ast.Name) and node.func.id == "Tensor": return len(node.args) >= 1
  return is_tensor_attr(node.func, CREATORS)

class Rewrite(ast.NodeTransformer):
  def visit_Assert(self, node): return ast.copy_location(ast.Pass(), node)
  def visit_Expr(self, node):
    if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) and node.value.func.id == "print":
      return ast.copy_location(ast.Pass(), node)
    self.generic_visit(node)
    return node
  def visit_Call(self, node):
    self.generic_visit(node)
    f = node.func
    line = ast.Constant(node.lineno)
    if isinstance(f, ast.Attribute) and f.attr in READS and not node.args and not node.keywords:
      new = ast.Call(ast.Name("_read", ast.Load()), [f.value, ast.Constant(f.attr), line], [])
    elif is_creator(node):
      new = ast.Call(ast.Name("_inp", ast.Load()), [ast.Lambda(ast.arguments([], [], None, [], [], None, []), node), line], [])
    else: return node
    return ast.fix_missing_locations(ast.copy_location(new, node))

def static_skip(tree):
  # a reason the program cannot be wrapped, read from its (rewritten) source, or None
  for n in ast.walk(tree):
    if isinstance(n, ast.Name) and n.id == "Variable": return "binds symbolic Variables inside the program (a TinyJit takes them as arguments)"
    if isinstance(n, ast.Attribute) and n.attr in ("uop", "lazydata", "schedule", "schedule_linear"): return "inspects the UOp graph or the schedule"
    if isinstance(n, ast.Name) and n.id in ("run_linear", "GlobalCounters", "Ops"): return "inspects the UOp graph or the schedule"
    if isinstance(n, ast.Attribute) and is_tensor_attr(n, {"empty"}): return "uses Tensor.empty (its contents are not defined)"
  return None

def hoist_seed(tree):
  # a Tensor.manual_seed(n) among the program's first statements (after the imports) is moved out of the function;
  # returns the seed (0 when there is none), or raises Skip when the program seeds anywhere else
  seed, body = 0, []
  prologue = True
  for st in tree.body:
    call = st.value if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) else None
    if prologue and call is not None and is_tensor_attr(call.func, {"manual_seed"}) and len(call.args) == 1 and isinstance(call.args[0], ast.Constant):
      seed = call.args[0].value
      continue
    if not isinstance(st, (ast.Import, ast.ImportFrom, ast.Pass)): prologue = False
    body.append(st)
  tree.body = body
  for n in ast.walk(tree):
    if isinstance(n, ast.Attribute) and n.attr == "manual_seed":
      raise Skip("reseeds the random generator mid-program (Python state that a replay does not repeat)")
  return seed

# ---- one program: the rewritten code, run as the function f(*inputs) ----
class Program:
  def __init__(self, name, path, code):
    self.name, self.path, self.code = name, path, code
    self.specs = []      # per constant built, in order: its original (values, dtype, device), from the probe
    self.runs = 0        # how many times the program's Python ran as the function
    self.result = None   # the placeholders of the last Python run
    self.kinds = []      # how each returned tensor is read (tolist, item, numpy)

  def execute(self, inputs, probe=False):
    outs, kinds, k = [], [], [0]
    def inp(make, line):
      i = k[0]
      k[0] += 1
      if probe:
        t = make()
        if not isinstance(t, Tensor): raise TypeError(f"line {line}: a constant did not build a Tensor")
        self.specs.append((t.numpy(), t.dtype, t.device))
        return t
      if i >= len(self.specs): raise RuntimeError(f"line {line}: the program built more constants than in the probe")
      return inputs[i]
    def read(t, kind, line):
      if not isinstance(t, Tensor): return getattr(t, kind)()  # a read of something else (a numpy array, a list)
      # a copy into a fresh buffer, made where the program reads: the function returns it
      outs.append(t.clone().realize())
      kinds.append(kind)
      idx = len(outs) - 1
      return Deferred(lambda v: v[idx], tuple(t.shape) if kind == "tolist" else None)
    g = {"__name__": "__jit_corpus__", "__file__": self.path, "_inp": inp, "_read": read}
    self.runs += 1
    exec(self.code, g)
    if k[0] != len(self.specs): raise RuntimeError(f"the program built {k[0]} constants, {len(self.specs)} in the probe")
    self.result, self.kinds = g.get("RESULT"), kinds
    return tuple(outs)

  def values(self, outs, inputs):
    # the read values of the returned tensors, filled into the program's RESULT, and the inputs' values after the call
    # (an input the program updates in place, an optimizer's weight, must be updated in the caller's buffer)
    if len(outs) != len(self.kinds): raise RuntimeError(f"{len(outs)} tensors returned, {len(self.kinds)} reads")
    result = resolve(self.result, [getattr(o, kind)() if kind != "numpy" else o.numpy().tolist() for o, kind in zip(outs, self.kinds)])
    return {"RESULT": result, "inputs after the call": [t.numpy() for t in inputs]}

  def new_inputs(self, call):
    # call c's inputs, as fresh realized buffers (the function may update them in place, an optimizer's weights)
    rng = np.random.default_rng(1000 * call + 17)
    ret = []
    for vals, dtype, device in self.specs:
      flat = vals.reshape(-1)
      if dtypes.is_float(dtype):
        new = (flat[rng.permutation(flat.size)].astype(np.float64) * SCALES[call % len(SCALES)]).astype(vals.dtype)
      elif dtypes.is_bool(dtype) or (flat != flat[0]).any():
        new = rng.choice(flat, flat.size)  # drawn from the original values: indices stay in range, divisors nonzero
      else: new = flat + (call + 1)        # an int constant (full, zeros) moves
      t = Tensor(new.reshape(vals.shape), dtype=dtype, device=device)
      ret.append((t.clone() if vals.ndim == 0 else t).realize())  # a 0-d array would be a constant, not a buffer
    return ret

def where(exc, path):
  # the program's line an exception came from
  for fr in reversed(traceback.extract_tb(exc.__traceback__)):
    if fr.filename == path: return f"line {fr.lineno}: {(fr.line or '').strip()}"
  return "outside the program"

def check(name, path):
  tree = ast.parse(open(path, encoding="utf-8").read(), path)
  try: seed = hoist_seed(tree)
  except Skip as e: return "skip", str(e)
  tree = ast.fix_missing_locations(Rewrite().visit(tree))
  if (why := static_skip(tree)): return "skip", why
  prog = Program(name, path, compile(tree, path, "exec"))

  # the probe: the rewritten program on its original values gives its recorded result
  Tensor.manual_seed(seed)
  try: probe = prog.values(prog.execute([], probe=True), [])["RESULT"]
  except NotDeferrable as e: return "skip", f"{e} ({where(e, path)})"
  exp_path = path[:-3] + ".expected.json"
  if os.path.exists(exp_path) and (m := mismatch(probe, json.load(open(exp_path))["result"], EXPECTED_RTOL, EXPECTED_ATOL, "RESULT")):
    return "fail", f"the rewritten program on its original inputs (no JIT) differs from {os.path.basename(exp_path)}: {m}"
  ninputs = len(prog.specs)

  # without the JIT: the function on each call's inputs
  calls = range(NCALLS)
  Tensor.manual_seed(seed)
  plain = []
  for c in calls:
    inputs = prog.new_inputs(c)
    plain.append(prog.values(prog.execute(inputs), inputs))

  # through TinyJit: the same inputs, the same generator state
  Tensor.manual_seed(seed)
  jitted = TinyJit(lambda *inputs: prog.execute(inputs))
  runs0, got = prog.runs, []
  for c in calls:
    inputs = prog.new_inputs(c)
    try: outs = jitted(*inputs)
    except JitError as e:
      if name in CAPTURE_READS and c == 1 and "cannot access tensor data" in str(e): return "skip", f"{CAPTURE_READS[name]} ({where(e, path)})"
      return "fail", f"call {c + 1}: JitError {e} ({where(e, path)})"
    got.append(prog.values(outs, inputs))
    if c == 1 and jitted.captured is None: return "fail", "the second call captured nothing"
  if name in CAPTURE_READS: return "fail", f"listed in CAPTURE_READS ({CAPTURE_READS[name]}) but its capture raised no JitError"
  if prog.runs - runs0 != 2: return "fail", f"the program's Python ran {prog.runs - runs0} times in {NCALLS} JIT calls (2 expected: calls 3+ replay)"

  # the read values of every call first, then the inputs after every call
  for key in ("RESULT", "inputs after the call"):
    for c in calls:
      if (m := mismatch(got[c][key], plain[c][key], RTOL, ATOL, key)):
        return "fail", f"call {c + 1} ({'replay' if c >= 2 else 'capture' if c == 1 else 'run'}): JIT {m} (without the JIT); JIT {short(got[c][key])} != {short(plain[c][key])}"
  # a replay that kept the capture's inputs (or random draws) would give the capture's values again: the values without
  # the JIT must change from call to call for that to show, else the program cannot fail here and is not counted
  if not any(mismatch(plain[c]["RESULT"], plain[c - 1]["RESULT"], 0, 0) for c in calls[2:]):
    return "skip", f"its values are the same for every call ({ninputs} inputs{', no random numbers' if ninputs == 0 else ''})"
  if not any(mismatch(got[c]["RESULT"], got[c - 1]["RESULT"], 0, 0) for c in calls[2:]): return "fail", "the replays repeat one result"
  return "ok", f"{ninputs} inputs" if ninputs else "no inputs, random numbers"

def programs():
  only = sys.argv[1:]
  for d in CORPORA:
    corpus = os.path.basename(os.path.normpath(d))
    for f in sorted(os.listdir(d), key=lambda f: (len(f.split("_")[0]), f)):
      if not (f[0].isdigit() and f.endswith(".py")): continue
      name = f[:-3]
      if only and not any(o in f"{corpus}/{name}" for o in only): continue
      yield corpus, name, os.path.join(d, f)

failed, nok, nskip, nknown = [], 0, 0, 0
for corpus, name, path in programs():
  try: status, msg = check(name, path)
  except Exception as e:
    status, msg = "fail", f"{type(e).__name__}: {e} ({where(e, path)})"
  if name in KNOWN_JIT_BUGS:
    says, bug = KNOWN_JIT_BUGS[name]
    if status == "fail" and says in msg: status, msg = "known", f"{msg} [KNOWN_JIT_BUGS: {bug.split(' Repro:')[0]}]"
    else: status, msg = "fail", f"listed in KNOWN_JIT_BUGS ({bug}) but {'failed otherwise' if status == 'fail' else status}: {msg}"
  print(f"{corpus}/{name}: " + {"ok": "ok", "skip": "skipped", "fail": "FAIL", "known": "KNOWN BUG"}[status] + f" ({msg})", flush=True)
  if status == "ok": nok += 1
  elif status == "skip": nskip += 1
  elif status == "known": nknown += 1
  else: failed.append(f"{corpus}/{name}")

if failed:
  print(f"jit corpus FAILED: {len(failed)} programs: {' '.join(failed)}")
  sys.exit(1)
print(f"jit corpus ok: {nok} programs, {nskip} skipped" + (f", {nknown} known JIT bugs (KNOWN_JIT_BUGS)" if nknown else ""))
