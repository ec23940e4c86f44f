# The peer suite's worker: runs inside `tinyscope run`, reads test ids (unittest dotted names) one per line on stdin,
# runs each with unittest and writes one JSON line per test to the file descriptor PEER_RESULT_FD:
#   {"start": id}  before the test (so the runner knows which test a crash or a hang took)
#   {"test": id, "outcome": pass|fail|error|skip|xfail|upass, "secs": s, "etype": name, "message": first line}
# The tests' own output goes to this process's stdout/stderr, which the runner sends to a log.
import io, json, os, sys, time, traceback, unittest

peer_root = os.environ["PEER_ROOT"]  # the folder holding tinygrad's `test` package
sys.path.insert(0, peer_root)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # the peer files are read-only

if not os.environ.get("PEER_REFERENCE"):  # recording the reference itself (run_peer.py --record) needs none
  import peer_standins  # noqa: E402  the listed stand-ins for the reference's internals (peer_standins.py)
  peer_standins.install()

out = os.fdopen(int(os.environ["PEER_RESULT_FD"]), "w", buffering=1)

class Result(unittest.TestResult):
  def __init__(self):
    super().__init__()
    self.outcome, self.etype, self.message = "pass", "", ""
  def _err(self, outcome, err):
    etype, value, _ = err
    self.outcome, self.etype = outcome, etype.__name__
    self.message = (str(value).strip().splitlines() or [""])[0][:300]
    traceback.print_exception(*err)
  def addError(self, test, err):
    # a failing subTest reports through addSubTest; a setUp/test error here
    if self.outcome == "pass": self._err("error", err)
  def addFailure(self, test, err):
    if self.outcome == "pass": self._err("fail", err)
  def addSubTest(self, test, subtest, err):
    if err is not None and self.outcome == "pass":
      self._err("fail" if issubclass(err[0], test.failureException) else "error", err)
  def addSkip(self, test, reason): self.outcome, self.message = "skip", str(reason)[:300]
  def addExpectedFailure(self, test, err): self.outcome = "xfail"
  def addUnexpectedSuccess(self, test): self.outcome = "upass"

loader = unittest.TestLoader()
for line in sys.stdin:
  tid = line.strip()
  if not tid: continue
  out.write(json.dumps({"start": tid}) + "\n")
  print(f"==== {tid}", flush=True)
  print(f"==== {tid}", file=sys.stderr, flush=True)
  t0 = time.perf_counter()
  res = Result()
  try:
    suite = loader.loadTestsFromName(tid)
    if loader.errors:
      msg = loader.errors[-1].strip().splitlines()[-1]
      loader.errors.clear()
      raise ImportError(msg)
    suite.run(res)
  except BaseException as e:  # an import error of the test's module, or a KeyboardInterrupt/SystemExit from a test
    res.outcome, res.etype, res.message = "error", type(e).__name__, (str(e).strip().splitlines() or [""])[0][:300]
    traceback.print_exc()
  out.write(json.dumps({"test": tid, "outcome": res.outcome, "secs": round(time.perf_counter() - t0, 3),
                        "etype": res.etype, "message": res.message}) + "\n")
  sys.stdout.flush(); sys.stderr.flush()
