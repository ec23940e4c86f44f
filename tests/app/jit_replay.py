# TinyJit replays give the values a run without the JIT gives: programs of the corpora's kinds (elementwise chains,
# reductions, softmax, matmul, convolution, indexing, cumulative ops, casts, random numbers, an optimizer step,
# several outputs, a result fed back as an input), each called four times through TinyJit with new inputs (the first call runs, the second captures,
# the third and fourth replay) and compared with the same function called without the JIT on the same inputs, and
# with numpy where numpy computes the same thing. Run by tests/app/test_cli.cpp on CPU, INTERP and VULKAN; prints
# "jit replay ok" when every value matches.
import numpy as np
from tinygrad import Tensor, TinyJit, dtypes, nn
from tinygrad.helpers import Context
from tinygrad.nn.optim import SGD

rng = np.random.default_rng(0)
def arr(*shape): return rng.standard_normal(shape).astype(np.float32)

def softmax_np(x):
  e = np.exp(x - x.max(-1, keepdims=True))
  return e / e.sum(-1, keepdims=True)

# name -> (function of tensors, input maker, numpy oracle or None)
PROGRAMS = {
  "elementwise chain": (lambda a, b: ((a * b + a) * 0.5).relu() + b, lambda: (arr(4, 5), arr(4, 5)), lambda a, b: np.maximum((a * b + a) * 0.5, 0) + b),
  "sum axes keepdim": (lambda a: a.sum(axis=(0, 2), keepdim=True), lambda: (arr(3, 4, 5),), lambda a: a.sum(axis=(0, 2), keepdims=True)),
  "mean and max": (lambda a: a.mean(1) + a.max(1), lambda: (arr(6, 7),), lambda a: a.mean(1) + a.max(1)),
  "softmax": (lambda a: a.softmax(-1), lambda: (arr(3, 8),), softmax_np),
  "matmul": (lambda a, b: a @ b, lambda: (arr(8, 16), arr(16, 4)), lambda a, b: a @ b),
  "conv2d": (lambda x, w: x.conv2d(w, padding=1), lambda: (arr(2, 3, 6, 6), arr(4, 3, 3, 3)), None),
  "gather by index": (lambda a, i: a[i], lambda: (arr(10, 3), rng.integers(0, 10, 6).astype(np.int32)), lambda a, i: a[i]),
  "cumsum": (lambda a: a.cumsum(1), lambda: (arr(3, 9),), lambda a: a.cumsum(1)),
  "argmax": (lambda a: a.argmax(1), lambda: (arr(5, 6),), lambda a: a.argmax(1)),
  "cast and where": (lambda a: (a > 0).where(a.cast(dtypes.half).cast(dtypes.float), -a), lambda: (arr(4, 4),), None),
  "two outputs": (lambda a, b: ((a + b).contiguous(), (a * b).sum()), lambda: (arr(5,), arr(5,)), lambda a, b: (a + b, (a * b).sum())),
}

def realize_all(ret):
  outs = ret if isinstance(ret, tuple) else (ret,)
  return tuple(o.realize() for o in outs)

bad = []
for name, (fn, make, oracle) in PROGRAMS.items():
  jitted = TinyJit(lambda *ts, fn=fn: realize_all(fn(*ts)))
  for call in range(4):
    inputs = make()
    got = [o.numpy() for o in jitted(*[Tensor(x) for x in inputs])]
    want = [o.numpy() for o in realize_all(fn(*[Tensor(x) for x in inputs]))]
    for g, w in zip(got, want):
      if g.shape != w.shape or not np.allclose(g, w, atol=1e-5, rtol=1e-5): bad.append(f"{name}, call {call}: {g.tolist()} != {w.tolist()} (no JIT)")
    if oracle is not None:
      ref = oracle(*inputs)
      for g, w in zip(got, ref if isinstance(ref, tuple) else (ref,)):
        if not np.allclose(g, w, atol=1e-4, rtol=1e-4): bad.append(f"{name}, call {call}: {g.tolist()} != {np.asarray(w).tolist()} (numpy)")
  if jitted.captured is None: bad.append(f"{name}: nothing was captured")

# random numbers: every replay draws new ones, the same ones as the same calls without the JIT from the same seed
def draws(f, n):
  Tensor.manual_seed(7)
  x = Tensor.zeros(4).contiguous().realize()
  return [f(x).numpy().tolist() for _ in range(n)]
plain = draws(lambda x: (x + Tensor.randn(4)).realize(), 4)
jitted_draws = draws(TinyJit(lambda x: (x + Tensor.randn(4)).realize()), 4)
if plain != jitted_draws: bad.append(f"random: {jitted_draws} != {plain} (no JIT)")
if len({tuple(d) for d in jitted_draws}) != 4: bad.append(f"random: replays repeat a draw {jitted_draws}")

# a result fed back as the next call's input (a rolling buffer): each call reads what the last one wrote
def rolling(f):
  buf, seen = Tensor([0.0, 1.0, 2.0]).contiguous().realize(), []
  for i in range(5):
    buf, first = f(buf, Tensor([10.0 + i]))
    seen.append((buf.numpy().tolist(), first.numpy().tolist()))
  return seen
def roll(buf, new):
  shifted = buf[1:].cat(new)
  return shifted.contiguous().realize(), shifted[:1].contiguous().realize()
if rolling(TinyJit(roll)) != rolling(roll): bad.append(f"rolling buffer: {rolling(TinyJit(roll))} != {rolling(roll)} (no JIT)")

# an optimizer step: the weights after four JIT'd steps are the weights after four plain ones
def train(jit):
  Tensor.manual_seed(3)
  layer = nn.Linear(4, 3)
  opt = SGD([layer.weight, layer.bias], lr=0.1, momentum=0.9)
  def step(x, y):
    with Context(TRAINING=1):
      opt.zero_grad()
      loss = ((layer(x) - y) ** 2).mean().backward()
      opt.step()
    return loss.realize()
  f = TinyJit(step) if jit else step
  data = np.random.default_rng(1)
  losses = [f(Tensor(data.standard_normal((8, 4)).astype(np.float32)), Tensor(data.standard_normal((8, 3)).astype(np.float32))).item() for _ in range(4)]
  return losses, layer.weight.numpy()
(l0, w0), (l1, w1) = train(False), train(True)
if not np.allclose(l0, l1, atol=1e-5) or not np.allclose(w0, w1, atol=1e-5): bad.append(f"SGD step: losses {l1} != {l0} (no JIT)")

# graph calls: consecutive kernels of one device are batched into graph calls at capture (at most JIT_BATCH_SIZE in
# the first, twice as many in each next), a lone kernel stays a plain call, JIT=2 makes none; the replays give the
# values the plain calls give
from tinygrad import Device
from tinygrad.helpers import Context as Ctx
def graph_shape(jitted):
  return [len(c.src[0].src[0].src) if c.src[0].op is Ops.CUSTOM_FUNCTION and c.src[0].arg == "graph" else 0 for c in jitted.captured.linear.src]
def chain(n):
  def f(a, b):
    for _ in range(n): a = (a * 0.5 + b).realize()
    return a
  return f
from tinygrad.uop.ops import Ops
for n, batch, jit, want in [(83, 32, 1, [32, 51]), (20, 4, 1, [4, 8, 8]), (5, 32, 2, [0] * 5), (1, 32, 1, [0])]:
  with Ctx(JIT=jit, JIT_BATCH_SIZE=batch):
    jf, a, b = TinyJit(chain(n)), Tensor.ones(6).contiguous().realize(), Tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0]).realize()
    outs = [jf(a, b).numpy() for _ in range(4)]
  if graph_shape(jf) != want: bad.append(f"graph calls of a {n}-kernel chain (JIT={jit}, JIT_BATCH_SIZE={batch}): {graph_shape(jf)} != {want}")
  plain = chain(n)(a, b).numpy()
  if any(not np.allclose(o, plain) for o in outs): bad.append(f"graph calls of a {n}-kernel chain: {[o.tolist() for o in outs]} != {plain.tolist()}")
# a kernel of another device ends a batch: two kernels here, one on CPU:1 (alone: a plain call), two here again
def two_devices(a, c):
  a = (a + 1).realize(); a = (a * 2).realize()
  c = (c + 3).realize()
  a = (a - 1).realize(); return (a * 3).realize(), c
jf, c0 = TinyJit(two_devices), Tensor([1.0, 2.0], device="CPU:1").realize()
outs = [[t.numpy().tolist() for t in jf(Tensor([1.0, 2.0]).realize(), c0)] for _ in range(4)]
if graph_shape(jf) != [2, 0, 2]: bad.append(f"graph calls around another device's kernel: {graph_shape(jf)} != [2, 0, 2]")
if outs[-1] != [[9.0, 15.0], [4.0, 5.0]]: bad.append(f"graph calls around another device's kernel: {outs[-1]} != [[9.0, 15.0], [4.0, 5.0]]")
if Device[Device.DEFAULT].graph is None: bad.append(f"{Device.DEFAULT} has no graph handler")

# symbolic inputs: a view bound to a Variable (a[:, :vi]) is replayed with each call's value, a mean over the symbolic
# dim divides by it, a shrink can start at a Variable (x.shrink(((st, st + 4),)))
from tinygrad import Variable
a = Tensor(arr(3, 10)).realize()
jplus, jmean = TinyJit(lambda t: (t + 1).realize()), TinyJit(lambda t: t.mean(1).realize())
b = Tensor(arr(10, 5)).realize()
jmatmul, jplus2 = TinyJit(lambda p, q: (p @ q).realize()), TinyJit(lambda t: (t + 1).realize())
@TinyJit
def jwindow(x, st): return x.shrink(((st, st + 4),)).contiguous().realize()
x = Tensor(np.arange(16, dtype=np.float32)).realize()
for i in range(1, 6):
  vi = Variable("i", 1, 10).bind(i)
  got_plus, got_mean = jplus(a[:, :vi])[:, :i].numpy(), jmean(a[:, :vi]).numpy()
  if not np.allclose(got_plus, a.numpy()[:, :i] + 1): bad.append(f"a[:, :vi] + 1 at i={i}: {got_plus.tolist()}")
  if not np.allclose(got_mean, a.numpy()[:, :i].mean(1), atol=1e-6): bad.append(f"a[:, :vi].mean(1) at i={i}: {got_mean.tolist()} != {a.numpy()[:, :i].mean(1).tolist()}")
  got_window = jwindow(x, Variable("st", 0, 12).bind(i)).numpy()
  if got_window.tolist() != list(range(i, i + 4)): bad.append(f"x.shrink(((st, st + 4),)) at st={i}: {got_window.tolist()}")
  # a matmul over the symbolic dim (reshapes and expands keep it), and a window whose Variable range reaches past the
  # dim (checked at the bound value, as the reference)
  got_mm = jmatmul(a[:, :vi], b[:vi, :]).numpy()
  if not np.allclose(got_mm, a.numpy()[:, :i] @ b.numpy()[:i], atol=1e-5): bad.append(f"a[:, :vi] @ b[:vi, :] at i={i}: {got_mm.tolist()}")
  got_win2 = jplus2(a[1:3, vi:vi + 2]).numpy()
  if not np.allclose(got_win2, a.numpy()[1:3, i:i + 2] + 1): bad.append(f"a[1:3, vi:vi+2] + 1 at i={i}: {got_win2.tolist()}")

for b in bad: print("MISMATCH", b)
assert not bad, f"{len(bad)} mismatches"
print("jit replay ok")
