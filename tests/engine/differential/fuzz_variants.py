# The random programs of the fuzzer (fuzz.cpp) as tinygrad users run them, through the Python API:
#   tinyscope run fuzz_variants.py -- DEFS.py jit            TinyJit: each program jitted and called with four sets of
#                                                           inputs (the first runs, the second captures, the last two
#                                                           replay), each call against the same function without the
#                                                           JIT on fresh tensors of the same values: bitwise equal
#                                                           (outputs that are views of inputs or of a weak dtype are
#                                                           not compared: the replay returns the captured ones, as the
#                                                           reference's)
#   tinyscope run fuzz_variants.py -- DEFS.py mixed DEV2 [EXPLAINED]
#                                                           the program's second half moved to DEV2 with .to() against
#                                                           the whole program on the default device: within the
#                                                           tolerance of the floats it computed through
#   python3 fuzz_variants.py DEFS.py print                  the outputs of each program on its own inputs, one line a
#                                                           seed (recorded from the reference into reference_outcomes.txt)
#   tinyscope run fuzz_variants.py -- DEFS.py check FILE [EXPLAINED]
#                                                           the outputs against a recorded FILE (the reference's);
#                                                           EXPLAINED lists the seeds that differ for a stated cause
#                                                           (each must still differ)
# DEFS.py comes from `ts_fuzz --python-defs FIRST COUNT`. Prints one line per disagreement (with its seed) and a
# summary line "variants: N programs, F failures, S skipped"; exits 1 on any failure.
import json, math, sys
from tinygrad import Tensor, TinyJit, dtypes

PROGRAMS = []
exec(open(sys.argv[1]).read())
mode = sys.argv[2]

def inputs(specs, data):
  return [Tensor(d, dtype=dt).reshape(shape).contiguous().realize() for (shape, dt), d in zip(specs, data)]

def values(outs):
  return [o.tolist() for o in outs]

def flat(x):
  if isinstance(x, list):
    for y in x: yield from flat(y)
  else: yield x

def skeleton(x): return [skeleton(y) for y in x] if isinstance(x, list) else 0

def dtype_tol(o):
  return {dtypes.float64: 1e-12, dtypes.float16: 2e-3, dtypes.bfloat16: 1.6e-2}.get(o, 4e-6 if dtypes.is_float(o) else 0.0)

# a and b the values of one output; tol 0: equal (NaN equal to NaN), else floats within tol of their magnitude
def same(a, b, tol):
  if skeleton(a) != skeleton(b): return "shapes differ"
  fa, fb = list(flat(a)), list(flat(b))
  scale = max([1.0] + [abs(x) for x in fa if isinstance(x, float) and math.isfinite(x)])
  for i, (x, y) in enumerate(zip(fa, fb)):
    if isinstance(x, float) or isinstance(y, float):
      x, y = float(x), float(y)
      if math.isnan(x) or math.isnan(y):
        if math.isnan(x) and math.isnan(y): continue
      elif x == y or (tol and math.isfinite(x) and math.isfinite(y) and abs(x - y) <= tol * max(abs(x), abs(y)) + tol * 1e-3 * scale): continue
    elif x == y: continue
    return f"element {i}: {y!r} against {x!r}"
  return None

failures, skipped, ran = [], [], 0
def fail(seed, what):
  failures.append(seed)
  print(f"FAIL seed {seed}: {what}", flush=True)

# why: the seed's difference or None; a seed listed with a cause must still differ, any other must not
def judge(seed, why):
  if seed in explained:
    if why: print(f"explained seed {seed}: {why}: {explained[seed]}", flush=True)
    else: fail(seed, "agrees now: remove it from the explained differences")
  elif why: fail(seed, why)

recorded, explained = {}, {}
if mode == "check":
  for line in open(sys.argv[3]):
    if line.strip() and not line.startswith("#"):
      seed, rest = line.split(" ", 1)
      recorded[int(seed)] = json.loads(rest)
# seeds whose outputs differ for a stated cause (SEED  # cause): each must still differ
for line in open(sys.argv[4]) if mode in ("check", "mixed") and len(sys.argv) > 4 else []:
  if line.split("#")[0].strip(): explained[int(line.split("#")[0])] = line.split("#", 1)[1].strip()

for seed, fn, specs, sets, tols, aliases in PROGRAMS:
  ran += 1
  try:
    runs = [fn(*inputs(specs, data)) for data in (sets if mode == "jit" else sets[:1])]
    dts, want = [o.dtype for o in runs[0]], [values(r) for r in runs]
    error = None
  except Exception as e:
    want, error = None, type(e).__name__
  if mode == "print":
    print(seed, json.dumps({"error": error} if error else {"outputs": want[0]}), flush=True)
    continue
  if mode == "check":
    ref = recorded.get(seed)
    # not recorded, or the reference could not run it here: its process died (its CPU kernels trap on an integer
    # division by zero) or its C compiler failed (clang with AVX512-BF16 on bfloat16 lanes)
    if ref is None or "crash" in ref or ref.get("error") == "CalledProcessError": skipped.append(seed); continue
    if ("error" in ref) != (error is not None):
      why = f"the reference {'raises ' + ref['error'] if 'error' in ref else 'computes it'}, tinyscope {'raises ' + error if error else 'computes it'}"
    elif error: continue
    else:
      why = next((f"output {k} ({dts[k]}) {w} (reference)" for k, (a, b) in enumerate(zip(ref["outputs"], want[0]))
                  if (w := same(a, b, max(dtype_tol(dts[k]), tols[k])))), None)
    judge(seed, why)
    continue
  if error: skipped.append(seed); continue  # a program every path rejects
  if mode == "jit":
    jitted = TinyJit(lambda *ts: [o.realize() for o in fn(*ts)])
    try:
      for k, data in enumerate(sets):
        got = values(jitted(*inputs(specs, data)))
        for o, (a, b) in enumerate(zip(want[k], got)):
          # a view of an input is not recomputed: TinyJit returns the captured call's input there; nor is a value of
          # a weak dtype (a python scalar's, e.g. bool_tensor.where(x, 4)): it replays the captured value (both as the
          # reference)
          if aliases[o] or "weak" in str(dts[o]): continue
          why = same(a, b, 0)
          if why: raise AssertionError(f"call {k + 1} output {o} ({dts[o]}) {why} (without the JIT)")
    except AssertionError as e: fail(seed, str(e))
    except Exception as e:
      if type(e).__name__ == "JitError" and "didn't JIT anything" in str(e): skipped.append(seed)  # outputs that are inputs
      else: fail(seed, f"the jitted program raises {type(e).__name__}: {e}")
  elif mode == "mixed":
    try:
      got = values(fn(*inputs(specs, sets[0]), MV=sys.argv[3]))
      why = next((f"output {o} ({dts[o]}) {w} (on one device)" for o, (a, b) in enumerate(zip(want[0], got))
                  if (w := same(a, b, max(dtype_tol(dts[o]), tols[o])))), None)
      judge(seed, why)
    except Exception as e:
      # the reference's refusal to copy a python scalar's weak dtype, and what a device cannot compute (float64
      # transcendentals in GLSL, lavapipe's loop limit) are right answers; anything else fails
      if any(w in str(e) for w in ("weak dtype", "has no GLSL builtin", "would return wrong data")): skipped.append(seed)
      else: fail(seed, f"the program across devices raises {type(e).__name__}: {e}")

print(f"variants: {ran} programs, {len(failures)} failures, {len(skipped)} skipped", flush=True)
sys.exit(1 if failures else 0)
