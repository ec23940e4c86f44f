// The reference's and numpy's figures for the host bench: a Python script in a child process times the workloads
// it knows, one "name<TAB>seconds" (or "name<TAB>ERROR why") line each.
#include "app/cli/bench_external.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace tscli {

namespace {

// the same workloads as the host bench (bench.cpp): same shapes, inputs filled with the same constants
constexpr const char* kReferenceScript = R"PY(
import contextlib, io, sys, time
from tinygrad import Tensor, Device
from tinygrad.helpers import Context, GlobalCounters
def full(shape, v): return Tensor.full(shape, v).contiguous().realize()
def add():
  a, b = full((16<<20,), 1.0), full((16<<20,), 2.0); return lambda: (a+b).contiguous()
def chain():
  a, b = full((16<<20,), 1.0), full((16<<20,), 2.0); return lambda: (((a*b)+a)*0.5).relu().add(b).contiguous()
def total():
  a = full((16<<20,), 1.0); return lambda: a.sum()
def rows():
  s = full((4096, 4096), 1.0); return lambda: s.sum(1)
def softmax():
  s = full((4096, 1024), 1.0); return lambda: s.softmax(-1).contiguous()
def matmul(n):
  def make():
    a, b = full((n, n), 1.0), full((n, n), 1.0); return lambda: a @ b
  return make
def conv():
  x, w = full((8, 64, 56, 56), 1.0), full((64, 64, 3, 3), 1.0); return lambda: x.conv2d(w, padding=1)
WORK = {"add 16M": add, "add fused chain 16M": chain, "sum 16M": total, "sum axis 1 4096x4096": rows,
        "softmax 4096x1024": softmax, "matmul 512": matmul(512), "matmul 1024": matmul(1024), "matmul 2048": matmul(2048),
        "conv2d 8x64x56x56 3x3": conv}
for name in NAMES:
  if name not in WORK:
    print(f"{name}\tERROR not a workload of the reference script", flush=True); continue
  try:
    run, best = WORK[name](), float("inf")
    with contextlib.redirect_stdout(io.StringIO()), Context(DEBUG=2):
      run().realize()
      w0, n = time.perf_counter(), 0
      while n < 2 or time.perf_counter() - w0 < WARM_S:
        run().realize(); n += 1
      for i in range(REPS):
        t0 = GlobalCounters.time_sum_s
        run().realize()
        best = min(best, GlobalCounters.time_sum_s - t0)
    print(f"{name}\t{best!r}", flush=True)
  except Exception as e:
    print(f"{name}\tERROR {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)
)PY";

// TinyJit, wall time realize to result (the same script runs in tinyscope and in the reference): 200 dependent small
// kernels replayed (seconds per kernel) and scheduled without the JIT, and a 2-layer MLP training step (forward,
// backward, Adam) first, scheduled again, and replayed by TinyJit; each the best of its timed runs
constexpr const char* kJitScript = R"PY(
import time
from tinygrad import Tensor, TinyJit, nn
from tinygrad.helpers import Context
from tinygrad.nn.optim import Adam
def best(f, n):
  f(); ts = []
  for _ in range(n):
    t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
  return min(ts)
N = 200
def chain(x):
  for _ in range(N): x = (x * 1.0001 + 0.5).contiguous()
  return x.realize()
jchain = TinyJit(chain)
x = Tensor.ones(64).contiguous().realize()
for _ in range(3): jchain(x)
print(f"jit chain\t{best(lambda: jchain(x).numpy(), 5 * REPS) / N!r}", flush=True)
print(f"scheduled chain\t{best(lambda: chain(x).numpy(), REPS) / N!r}", flush=True)
class MLP:
  def __init__(self): self.l1, self.l2 = nn.Linear(64, 128), nn.Linear(128, 10)
  def __call__(self, x): return self.l2(self.l1(x).relu())
Tensor.manual_seed(0)
model = MLP()
opt = Adam(nn.state.get_parameters(model), lr=1e-3)
xb, yb = Tensor.randn(32, 64).realize(), Tensor.randint(32, high=10).realize()
def step(xb, yb):
  with Context(TRAINING=1):
    opt.zero_grad()
    loss = model(xb).sparse_categorical_crossentropy(yb).backward()
    opt.step()
  return loss.realize()
t0 = time.perf_counter(); step(xb, yb).numpy()
print(f"mlp step first\t{time.perf_counter() - t0!r}", flush=True)
print(f"mlp step scheduled\t{best(lambda: step(xb, yb).numpy(), REPS)!r}", flush=True)
jstep = TinyJit(step)
for _ in range(3): jstep(xb, yb)
print(f"mlp step replayed\t{best(lambda: jstep(xb, yb).numpy(), 5 * REPS)!r}", flush=True)
)PY";

constexpr const char* kNumpyScript = R"PY(
import time
import numpy as np
def full(shape, v): return np.full(shape, v, dtype=np.float32)
def add():
  a, b = full((16<<20,), 1.0), full((16<<20,), 2.0); return lambda: a + b
def chain():
  a, b = full((16<<20,), 1.0), full((16<<20,), 2.0); return lambda: np.maximum((a*b + a)*np.float32(0.5), 0) + b
def total():
  a = full((16<<20,), 1.0); return lambda: a.sum()
def rows():
  s = full((4096, 4096), 1.0); return lambda: s.sum(1)
def softmax():
  s = full((4096, 1024), 1.0)
  def run():
    e = np.exp(s - s.max(-1, keepdims=True)); return e / e.sum(-1, keepdims=True)
  return run
def matmul(n):
  def make():
    a, b = full((n, n), 1.0), full((n, n), 1.0); return lambda: a @ b
  return make
WORK = {"add 16M": add, "add fused chain 16M": chain, "sum 16M": total, "sum axis 1 4096x4096": rows,
        "softmax 4096x1024": softmax, "matmul 512": matmul(512), "matmul 1024": matmul(1024), "matmul 2048": matmul(2048)}
print(f"#numpy {np.__version__}", flush=True)
for name in NAMES:
  if name not in WORK:
    print(f"{name}\tERROR numpy has no such operation here", flush=True); continue
  run, best = WORK[name](), float("inf")
  run()
  w0, n = time.perf_counter(), 0
  while n < 2 or time.perf_counter() - w0 < WARM_S:
    run(); n += 1
  for i in range(REPS):
    t0 = time.perf_counter(); run(); t = time.perf_counter() - t0
    best = min(best, t)
  print(f"{name}\t{best!r}", flush=True)
)PY";

std::string py_str(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += (c == '\'' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return o + "'";
}
std::string sh_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

// runs `python` on the script (NAMES and REPS prepended) with `env` ("K=V K=V", shell-quoted); fills secs/not_run
// from its lines, and the first "#..." line into label_extra
void run_script(const std::string& env, const std::string& python, const char* script, const std::vector<std::string>& names, int reps,
                ExternalFigures& out, std::string* label_extra) {
  char path[] = "/tmp/tinyscope-bench-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) {
    out.error = "cannot write a temporary script";
    return;
  }
  close(fd);
  {
    std::ofstream f(path);
    f << "NAMES = [";
    for (size_t i = 0; i < names.size(); ++i) f << (i ? ", " : "") << py_str(names[i]);
    f << "]\nREPS = " << reps << "\nWARM_S = " << kWarmSeconds << "\n" << script;
  }
  const std::string cmd = env + " " + python + " " + path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string all, line;
  if (p) {
    char buf[4096];
    while (fgets(buf, sizeof buf, p)) {
      line = buf;
      all += line;
      if (!line.empty() && line.back() == '\n') line.pop_back();
      if (label_extra && line.rfind("#", 0) == 0 && label_extra->empty()) *label_extra = line.substr(1);
      const size_t tab = line.find('\t');
      if (tab == std::string::npos) continue;
      const std::string name = line.substr(0, tab), v = line.substr(tab + 1);
      if (v.rfind("ERROR", 0) == 0) out.not_run[name] = v.substr(std::min<size_t>(6, v.size()));
      else out.secs[name] = std::atof(v.c_str());
    }
  }
  const int st = p ? pclose(p) : -1;
  std::filesystem::remove(path);
  if (st != 0 && out.secs.empty()) {
    // the child's last lines say why (an import error, a missing module)
    std::string tail = all.size() > 600 ? all.substr(all.size() - 600) : all;
    while (!tail.empty() && tail.back() == '\n') tail.pop_back();
    out.error = python + " failed" + (tail.empty() ? "" : ": " + tail.substr(tail.rfind('\n') == std::string::npos ? 0 : tail.rfind('\n') + 1));
  }
}

bool python_has(const std::string& python, const std::string& module) {
  return std::system((python + " -c 'import " + module + "' >/dev/null 2>&1").c_str()) == 0;
}

// the first python3 that imports numpy ("" when none does)
std::string python_with_numpy() {
  for (const char* p : {"python3", "/usr/bin/python3"})
    if (python_has(p, "numpy")) return p;
  return {};
}

// `--reference DIR` as an absolute path; false (out.error says why) when DIR holds no tinygrad checkout
bool reference_checkout(const std::string& tinygrad_dir, std::filesystem::path& dir, ExternalFigures& out) {
  std::error_code ec;
  dir = std::filesystem::absolute(tinygrad_dir, ec);
  if (std::filesystem::exists(dir / "tinygrad" / "tensor.py", ec)) return true;
  out.error = "--reference " + tinygrad_dir + ": no tinygrad checkout there (tinygrad/tensor.py is missing)";
  return false;
}

}  // namespace

ExternalFigures reference_figures(const std::string& tinygrad_dir, const std::vector<std::string>& names, int reps) {
  ExternalFigures out;
  std::filesystem::path dir;
  if (!reference_checkout(tinygrad_dir, dir, out)) return out;
  out.label = "tinygrad at " + dir.string() + " (DEV=CPU, its kernels' own times)";
  run_script("PYTHONPATH=" + sh_quote(dir.string()) + " DEV=CPU", "python3", kReferenceScript, names, reps, out, nullptr);
  return out;
}

ExternalFigures numpy_figures(const std::vector<std::string>& names, int reps) {
  ExternalFigures out;
  const std::string python = python_with_numpy();
  if (python.empty()) {
    out.error = "numpy is not installed (python3 -c 'import numpy' fails)";
    return out;
  }
  std::string version;
  run_script("", python, kNumpyScript, names, reps, out, &version);
  out.label = (version.empty() ? "numpy" : version) + " (" + python + ", wall time; its BLAS as installed)";
  return out;
}

ExternalFigures jit_figures(const std::string& env, const std::string& python, int reps, const std::string& label) {
  ExternalFigures out;
  out.label = label;
  run_script(env, python, kJitScript, {}, reps, out, nullptr);
  return out;
}

ExternalFigures reference_jit_figures(const std::string& tinygrad_dir, int reps) {
  std::filesystem::path dir;
  if (ExternalFigures out; !reference_checkout(tinygrad_dir, dir, out)) return out;
  // (the script reads results with numpy)
  std::string python = python_with_numpy();
  if (python.empty()) python = "python3";
  return jit_figures("PYTHONPATH=" + sh_quote(dir.string()) + " DEV=CPU", python, reps, "tinygrad at " + dir.string() + " (DEV=CPU)");
}

}  // namespace tscli
