#!/usr/bin/python3
"""The peer suite: tinygrad's own test files, unchanged, run inside tinyscope and compared with the reference.

  run_peer.py --tinyscope BIN --peer ../shared/peer --device CPU [--workers 2] [--suite test_ops ...] [--only SUBSTR]
              [--report out.csv] [--timeout 180]
  run_peer.py --record test/unit/test_dtype_spec.py --tinygrad TINYGRAD_CHECKOUT --peer ../shared/peer [--python /usr/bin/python3]
              records the reference's outcome of every test of a test file (DEV=CPU, one test at a time in workers that
              restart after a crash or a hang, as the shared outcomes were recorded) into
              tests/peer/reference-outcomes/ (test/unit/test_x.py -> unit_test_x.csv, test/backend/test_x.py -> test_x.csv);
              with --device D (NULL) on that device, into tests/peer/reference-outcomes-D/, which a run on D compares with

Each suite is a reference-outcomes CSV (`test,outcome,secs,etype,message`, one row a test) named after a test file
(test_ops.csv is test/backend/test_ops.py; unit_test_jit.csv is test/unit/test_jit.py); the project's own recordings
of the reference (tests/peer/reference-outcomes/) are read beside the shared ones. Worker processes
(`tinyscope run peer_worker.py`) each run many tests; a test that crashes its worker or runs past --timeout fails
(outcome crash/hang) and the worker is restarted. A test *counts* when the reference passes it and
tests/peer/internal.txt does not list it. The run fails when a counted test fails and tests/peer/known_failures.txt
does not list it for this device, or when a listed test passes (the list only shrinks).
"""
import argparse, csv, json, os, selectors, subprocess, sys, tempfile, time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))

def read_reference(dirs):
  suites = {}
  for d in dirs:
    if not os.path.isdir(d): continue
    for f in sorted(os.listdir(d)):
      if f.endswith(".csv"):
        with open(os.path.join(d, f)) as fh: suites[f[:-4]] = {r["test"]: r["outcome"] for r in csv.DictReader(fh)}
  return suites

def read_list(path, with_device):
  """`[DEVICE|*] test.id  reason...` lines (# comments); returns {(device, id): reason} or {id: reason}"""
  out = {}
  with open(path) as fh:
    for n, line in enumerate(fh, 1):
      line = line.strip()
      if not line or line.startswith("#"): continue
      parts = line.split(None, 2 if with_device else 1)
      need = 3 if with_device else 2
      if len(parts) < need: sys.exit(f"{path}:{n}: every entry needs a reason: {line!r}")
      if with_device: out[(parts[0], parts[1])] = parts[2]
      else: out[parts[0]] = parts[1]
  return out

class Worker:
  def __init__(self, args, env, log):
    self.rfd, wfd = os.pipe()
    env = dict(env, PEER_RESULT_FD=str(wfd))
    runner = [args.python] if args.record else [args.tinyscope, "run"]
    self.proc = subprocess.Popen(runner + [os.path.join(HERE, "peer_worker.py")], stdin=subprocess.PIPE,
                                 stdout=log, stderr=subprocess.STDOUT, env=env, pass_fds=(wfd,), cwd=args.tmp, text=True)
    os.close(wfd)
    os.set_blocking(self.rfd, False)
    self.buf, self.current, self.since = b"", None, 0.0

  def send(self, tid):
    self.current, self.since = tid, time.monotonic()
    self.proc.stdin.write(tid + "\n")
    self.proc.stdin.flush()

  def lines(self):
    try: chunk = os.read(self.rfd, 1 << 16)
    except BlockingIOError: return [], False
    if not chunk: return [], True  # the worker's end closed: it exited
    self.buf += chunk
    *done, self.buf = self.buf.split(b"\n")
    return [json.loads(x) for x in done if x.strip()], False

  def kill(self):
    try: self.proc.kill()
    except ProcessLookupError: pass
    self.proc.wait()
    os.close(self.rfd)

def run_tests(args, ids, env):
  """runs `ids` in args.workers workers; returns {id: (outcome, secs, etype, message)}"""
  todo, results = list(reversed(ids)), {}
  log = open(os.path.join(args.tmp, "worker.log"), "a")
  sel = selectors.DefaultSelector()
  workers = []
  def start():
    w = Worker(args, env, log)
    sel.register(w.rfd, selectors.EVENT_READ, w)
    workers.append(w)
    feed(w)
  def feed(w):
    if todo: w.send(todo.pop())
    else: w.current = None; w.proc.stdin.close()
  def retire(w, outcome):
    if w.current is not None:
      results[w.current] = (outcome, round(time.monotonic() - w.since, 3), "", f"the worker {'crashed' if outcome == 'crash' else 'ran past the timeout'}")
      report_progress(w.current)
    sel.unregister(w.rfd)
    w.kill()
    workers.remove(w)
  def report_progress(tid):
    if args.verbose: print(f"  {results[tid][0]:6s} {results[tid][1]:7.2f}s {tid}", flush=True)
  for _ in range(min(args.workers, len(todo))): start()
  while workers:
    for key, _ in sel.select(timeout=1.0):
      w = key.data
      lines, closed = w.lines()
      for r in lines:
        if "test" in r:
          results[r["test"]] = (r["outcome"], r["secs"], r["etype"], r["message"])
          report_progress(r["test"])
          feed(w)
      if closed:
        retire(w, "crash")
        if todo: start()
    now = time.monotonic()
    for w in list(workers):
      if w.current is not None and now - w.since > args.timeout:
        retire(w, "hang")
        if todo: start()
  log.close()
  return results

def suite_name(test_file):
  """test/unit/test_x.py -> unit_test_x, test/backend/test_x.py -> test_x (the shared outcomes' names)"""
  parts = os.path.normpath(test_file).split(os.sep)
  return ("unit_" if "unit" in parts else "") + os.path.splitext(parts[-1])[0]

def outcomes_dir(device):
  """the project's recordings of the reference: on CPU beside the shared ones, on another device in a folder of its own"""
  return os.path.join(HERE, "reference-outcomes" + ("" if device == "CPU" else "-" + device.replace(":", "_")))

def device_env(device, env):
  # NULL runs nothing: its copies out leave their destination as it was, as the reference's tests run on it
  if device == "NULL": env.setdefault("NULL_ALLOW_COPYOUT", "1")

def record(args):
  """the reference's outcome of every test of args.record, run by args.python over the checkout args.tinygrad"""
  module = os.path.splitext(os.path.normpath(args.record))[0].replace(os.sep, ".")
  env = dict(os.environ, DEV=args.device, RUN_SLOW="1", DEBUG="0", PEER_ROOT=args.tinygrad, PEER_REFERENCE="1", PYTHONPATH=args.tinygrad,
             PYTHONDONTWRITEBYTECODE="1")
  device_env(args.device, env)
  lister = ("import sys, unittest\nsys.path.insert(0, sys.argv[1])\n"
            "def walk(s):\n  for t in s:\n    yield from (walk(t) if isinstance(t, unittest.TestSuite) else [t.id()])\n"
            "print('\\n'.join(walk(unittest.TestLoader().loadTestsFromName(sys.argv[2]))))")
  ids = subprocess.run([args.python, "-c", lister, args.tinygrad, module], env=env, check=True, capture_output=True, text=True).stdout.split()
  args.tmp = tempfile.mkdtemp(prefix="tinyscope-peer-record-")
  env["HYPOTHESIS_STORAGE_DIRECTORY"] = os.path.join(args.tmp, "hypothesis")
  results = run_tests(args, ids, env)
  out = os.path.join(args.out or outcomes_dir(args.device), suite_name(args.record) + ".csv")
  os.makedirs(os.path.dirname(out), exist_ok=True)
  with open(out, "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["test", "outcome", "secs", "etype", "message"])
    for t in ids: w.writerow([t, *results.get(t, ("not-run", 0, "", ""))])
  print(f"{len(ids)} tests of {args.record} on the reference: {dict(Counter(results.get(t, ('not-run',))[0] for t in ids))} -> {out}")
  return 0

def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--tinyscope")
  ap.add_argument("--record", help="a test file of the checkout (test/unit/test_x.py): record the reference's outcomes")
  ap.add_argument("--tinygrad", help="with --record: the reference's checkout (commit a9069c1)")
  ap.add_argument("--python", default="/usr/bin/python3", help="with --record: the Python that runs the reference")
  ap.add_argument("--out", help="with --record: the folder the CSV goes to (default: tests/peer/reference-outcomes)")
  ap.add_argument("--peer", required=True, help="the folder holding tinygrad-tests/ and reference-outcomes/")
  ap.add_argument("--device", default="CPU")
  ap.add_argument("--workers", type=int, default=2)
  ap.add_argument("--suite", action="append", help="a reference-outcomes CSV's name (default: all)")
  ap.add_argument("--only", help="run only the tests whose id contains this")
  ap.add_argument("--timeout", type=float, default=180)
  ap.add_argument("--report", help="write every test's outcome here (CSV)")
  ap.add_argument("--verbose", action="store_true")
  args = ap.parse_args()
  if args.record:
    if not args.tinygrad: ap.error("--record needs --tinygrad")
    args.tinygrad = os.path.abspath(args.tinygrad)
    return record(args)
  if not args.tinyscope: ap.error("--tinyscope is required")
  args.peer, args.tinyscope = os.path.abspath(args.peer), os.path.abspath(args.tinyscope)  # the workers run elsewhere
  # a device with recordings of its own (the reference run on that device: NULL) is compared with those only
  own = outcomes_dir(args.device)
  suites = read_reference([own] if args.device != "CPU" and os.path.isdir(own) else
                          [os.path.join(args.peer, "reference-outcomes"), os.path.join(HERE, "reference-outcomes")])
  names = args.suite or sorted(suites)
  for n in names:
    if n not in suites: sys.exit(f"no reference outcomes for suite {n!r} (have {', '.join(sorted(suites))})")
  known = read_list(os.path.join(HERE, "known_failures.txt"), True)
  internal = read_list(os.path.join(HERE, "internal.txt"), False)
  ids = [t for n in names for t in suites[n] if args.only is None or args.only in t]
  ref = {t: o for n in names for t, o in suites[n].items()}

  args.tmp = tempfile.mkdtemp(prefix="tinyscope-peer-")
  env = dict(os.environ, DEV=args.device, RUN_SLOW="1", DEBUG="0", PEER_ROOT=os.path.join(args.peer, "tinygrad-tests"),
             HYPOTHESIS_STORAGE_DIRECTORY=os.path.join(args.tmp, "hypothesis"), PYTHONDONTWRITEBYTECODE="1")
  # the multi-device tests (shards on VULKAN:1..3, transfers to VULKAN:1) run on logical devices of the one GPU when
  # there is no second one (lavapipe): each its own Vulkan device with memory of its own
  if args.device.startswith("VULKAN"): env.setdefault("TINYSCOPE_VK_LOGICAL", "3")
  device_env(args.device, env)
  t0 = time.monotonic()
  results = run_tests(args, ids, env)
  wall = time.monotonic() - t0

  bad, counts = [], Counter()
  for t in ids:
    outcome, secs, etype, msg = results.get(t, ("not-run", 0, "", ""))
    is_known = (args.device, t) in known or ("*", t) in known
    if ref[t] != "pass": counts["not counted (the reference does not pass)"] += 1; continue
    if t in internal: counts["internal"] += 1; continue
    counts["counted"] += 1
    if outcome == "pass":
      counts["passed"] += 1
      if is_known: bad.append(f"NOW PASSES (remove it from known_failures.txt): {args.device} {t}")
    elif not is_known: bad.append(f"FAILS ({outcome}{': ' + etype if etype else ''}): {t}\n      {msg}")
    else: counts["known failure"] += 1
  # the Khronos validation layer (TINYSCOPE_VK_VALIDATION=1) prints each message where it happens: any fails the run,
  # named with the test the log shows last before it (the workers share the log, so that is where it came, or close)
  if env.get("TINYSCOPE_VK_VALIDATION") == "1":
    current = "(before any test)"
    with open(os.path.join(args.tmp, "worker.log"), errors="replace") as fh:
      for line in fh:
        if line.startswith("==== "): current = line[5:].strip()
        elif line.startswith("Vulkan validation layer"): bad.append(f"VALIDATION MESSAGE near {current}:\n      {line.strip()[:400]}")
  if args.report:
    with open(args.report, "w", newline="") as fh:
      w = csv.writer(fh)
      w.writerow(["test", "reference", "outcome", "secs", "etype", "message"])
      for t in ids: w.writerow([t, ref[t], *results.get(t, ("not-run", 0, "", ""))])
  c = counts["counted"]
  print(f"peer {'+'.join(names)} on {args.device}: {counts['passed']} of {c} counted tests pass "
        f"({100.0 * counts['passed'] / max(c, 1):.1f}%), {counts['known failure']} known failures, {counts['internal']} internal, "
        f"{counts['not counted (the reference does not pass)']} not passed by the reference; {wall:.0f} s with {args.workers} workers")
  print(f"  outcomes: {dict(Counter(results.get(t, ('not-run',))[0] for t in ids))}")
  for n in names:  # the goals table's figures: counted = the reference passes and not internal
    counted = [t for t in suites[n] if t in ids and ref[t] == "pass" and t not in internal]
    passed = sum(results.get(t, ("not-run",))[0] == "pass" for t in counted)
    print(f"  {n:16s} {passed:4d} of {len(counted):4d} counted pass ({100.0 * passed / max(len(counted), 1):5.1f}%)")
  print(f"  worker output: {os.path.join(args.tmp, 'worker.log')}")
  for b in bad: print("  " + b)
  return 1 if bad else 0

if __name__ == "__main__":
  sys.exit(main())
