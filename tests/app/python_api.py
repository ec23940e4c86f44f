# tinygrad's Python API on tinyscope: every expected value below is what tinygrad a9069c1 printed (DEV=CPU).
# Run by tests/app/test_cli.cpp; prints "python api ok" when every check holds.
import ctypes, functools, http.server, inspect, json, os, re, threading
from tinygrad import Tensor, dtypes, Variable
from tinygrad.uop.ops import Ops
from tinygrad.engine.realize import run_linear

t = Tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]])
checks = {
  "int index": (t[1].tolist(), [5.0, 6.0, 7.0, 8.0]),
  "item": (t[1, 2].item(), 7.0),
  "negative index": (t[-1].tolist(), [9.0, 10.0, 11.0, 12.0]),
  "slices": (t[0:2, 1:3].tolist(), [[2.0, 3.0], [6.0, 7.0]]),
  "step": (t[:, ::2].tolist(), [[1.0, 3.0], [5.0, 7.0], [9.0, 11.0]]),
  "negative steps": (t[::-1, ::-2].tolist(), [[12.0, 10.0], [8.0, 6.0], [4.0, 2.0]]),
  "None": (t[None, 1].shape, (1, 4)),
  "Ellipsis": (t[..., 1].tolist(), [2.0, 6.0, 10.0]),
  "tensor index": (t[Tensor([2, 0])].tolist(), [[9.0, 10.0, 11.0, 12.0], [1.0, 2.0, 3.0, 4.0]]),
  "tensor index dim 1": (t[:, Tensor([3, 1])].tolist(), [[4.0, 2.0], [8.0, 6.0], [12.0, 10.0]]),
  "two tensor indices": (t[Tensor([0, 2]), Tensor([1, 3])].tolist(), [2.0, 12.0]),
  "list index": (t[[0, 2]].tolist(), [[1.0, 2.0, 3.0, 4.0], [9.0, 10.0, 11.0, 12.0]]),
  "flat pad": (Tensor([1.0, 2.0]).pad((1, 2)).tolist(), [0.0, 1.0, 2.0, 0.0, 0.0]),
  "pad value": (t.pad(((1, 0), None), value=-1).tolist()[0], [-1.0, -1.0, -1.0, -1.0]),
  "T": (t.T.shape, (4, 3)),
  "int ops": ((Tensor([1, 2, 3]) * 2 + 1).tolist(), [3, 5, 7]),
  "floordiv": ((Tensor([7, -7, 9]) // 2).tolist(), [3, -4, 4]),
  "mod": ((Tensor([7, -7, 9]) % 3).tolist(), [1, 2, 0]),
  "int truediv": ((Tensor([1, 2, 3]) / 2).tolist(), [0.5, 1.0, 1.5]),
  "rsub": ((10 - Tensor([1.0, 2.0])).tolist(), [9.0, 8.0]),
  "rpow": ((2 ** Tensor([2.0, 3.0])).tolist(), [4.0, 8.0]),
  "and": (((Tensor([1, 2, 3]) > 1) & (Tensor([1, 2, 3]) < 3)).tolist(), [False, True, False]),
  "invert": ((~Tensor([True, False])).tolist(), [False, True]),
  "argmax": (t.argmax(axis=1).tolist(), [3, 3, 3]),
  "var": (t.var(axis=0).tolist(), [16.0, 16.0, 16.0, 16.0]),
  "cumsum": (Tensor([1, 2, 3, 4]).cumsum().tolist(), [1, 3, 6, 10]),
  "full int": (str(Tensor.full((2,), 3).dtype), "dtypes.int"),
  "scalar dtype": (str(Tensor(3).dtype), "dtypes.weakint"),
  "list dtypes": ([str(Tensor(x).dtype) for x in ([1, 2], [True], [1, 2.5])], ["dtypes.int", "dtypes.bool", "dtypes.float"]),
  "reshape None": (t.reshape(None, 2, 2).shape, (3, 2, 2)),
  "cast truncates": (Tensor([1.7, -1.7]).cast(dtypes.int32).tolist(), [1, -1]),
  "iterate": ([r.tolist() for r in Tensor([[1, 2], [3, 4]])], [[1, 2], [3, 4]]),
  "empty list": (Tensor([]).tolist(), []),
  "split": ([x.tolist() for x in Tensor([1, 2, 3, 4, 5]).split(2)], [[1, 2], [3, 4], [5]]),
  "gather": (t.gather(1, Tensor([[0], [1], [2]])).tolist(), [[1.0], [6.0], [11.0]]),
  "arange down": (Tensor.arange(5, 0, -2).tolist(), [5, 3, 1]),
  "eye(n, m)": (Tensor.eye(2, 3).tolist(), [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
  "half reads as float": (Tensor([1.5, 2.25]).half().tolist(), [1.5, 2.25]),
  "conv2d": (Tensor.arange(16, dtype=dtypes.float).reshape(1, 1, 4, 4).conv2d(Tensor.ones(1, 1, 2, 2)).tolist(),
             [[[[10.0, 14.0, 18.0], [26.0, 30.0, 34.0], [42.0, 46.0, 50.0]]]]),
  "bytes": (Tensor(b"\x01\x02").tolist(), [1, 2]),
  "dtype from float list": (Tensor([1.7, -2.2], dtype=dtypes.int32).tolist(), [1, -2]),
  "dtype identity": ((dtypes.float32 is dtypes.float, dtypes.default_int is dtypes.int32), (True, True)),
  "Ops": ((str(Ops.ADD), repr(Ops.MUL), (t + 1).uop.op is Ops.ADD), ("Ops.ADD", "Ops.MUL", True)),
}

a = Tensor([1.0, 2.0, 3.0, 4.0]).realize()
b = a
b += 1
checks["iadd keeps the object"] = (b is a and a.tolist() == [2.0, 3.0, 4.0, 5.0], True)
checks["realize returns self"] = (a.realize() is a, True)
checks["class realize"] = (Tensor.realize(Tensor([1.0]) + 1, Tensor([2.0]) * 2).tolist(), [2.0])
s = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).realize()
s[0] = 9
s[:, 1] = Tensor([7.0, 8.0])
s[1, ::2] = -1
checks["setitem"] = (s.tolist(), [[9.0, 7.0, 9.0], [-1.0, 8.0, -1.0]])
c = Tensor([1.0, 2.0, 3.0, 4.0]).realize()
c[1:3] += 10
checks["setitem iadd"] = (c.tolist(), [1.0, 12.0, 13.0, 4.0])

# ---- keyword arguments and entries added for tinygrad's docs/tensor/*.md ----
x = Tensor([-1.5, 0.0, 2.0])
p = Tensor.arange(25, dtype=dtypes.float).reshape(1, 1, 5, 5)
checks.update({
  "full buffer=False": ((str(Tensor.full((2, 3), 3, buffer=False).dtype), Tensor.full((2, 3), 3, buffer=False).tolist()),
                        ("dtypes.weakint", [[3, 3, 3], [3, 3, 3]])),
  "full buffer=False dtype": ((str(Tensor.full((2,), 1.5, dtype=dtypes.int32, buffer=False).dtype),
                               Tensor.full((2,), 1.5, dtype=dtypes.float16, buffer=False).tolist()), ("dtypes.int", [1.5, 1.5])),
  "full_like buffer=False": ((t.full_like(7, buffer=False).tolist()[2], str(t.full_like(7, buffer=False).dtype)),
                             ([7.0, 7.0, 7.0, 7.0], "dtypes.float")),
  "gelu none": ([round(v, 6) for v in x.gelu(approximate="none").tolist()], [-0.100211, 0.0, 1.9545]),
  "gelu tanh": ([round(v, 6) for v in x.gelu(approximate="tanh").tolist()], [-0.100428, 0.0, 1.954598]),
  "add reverse": (Tensor([1.0, 2.0]).add(10, reverse=True).tolist(), [11.0, 12.0]),
  "sub reverse": (Tensor([1.0, 2.0]).sub(10, reverse=True).tolist(), [9.0, 8.0]),
  "sub reverse tensor": (Tensor([1.0, 2.0]).sub(Tensor([5.0, 7.0]), reverse=True).tolist(), [4.0, 5.0]),
  "mul reverse": (Tensor([1.0, 2.0]).mul(3, reverse=True).tolist(), [3.0, 6.0]),
  "div reverse": (Tensor([1.0, 4.0]).div(2, reverse=True).tolist(), [2.0, 0.5]),
  "div reverse floor": (Tensor([2, 3]).div(7, reverse=True, rounding_mode="floor").tolist(), [3, 2]),
  "mod reverse": (Tensor([3, 4]).mod(10, reverse=True).tolist(), [1, 2]),
  "pow reverse": (Tensor([2.0, 3.0]).pow(2, reverse=True).tolist(), [4.0, 8.0]),
  "bitwise reverse": ((Tensor([6, 3]).bitwise_xor(5, reverse=True).tolist(), Tensor([6, 3]).bitwise_and(5, reverse=True).tolist(),
                       Tensor([6, 3]).bitwise_or(8, reverse=True).tolist()), ([3, 6], [4, 1], [14, 11])),
  "lshift": ((Tensor([1, 3, 31], dtype=dtypes.uint8).lshift(2).tolist(), str(Tensor([1, 3, 31], dtype=dtypes.uint8).lshift(2).dtype)),
             ([4, 12, 124], "dtypes.uchar")),
  "rshift": (Tensor([4, 13, 125], dtype=dtypes.uint8).rshift(2).tolist(), [1, 3, 31]),
  "shift reverse": ((Tensor([1, 2, 3]).lshift(Tensor([4, 4, 4]), reverse=True).tolist(),
                     Tensor([1, 2, 3]).rshift(Tensor([64, 64, 64]), reverse=True).tolist()), ([8, 16, 32], [32, 16, 8])),
  "shift operators": (((Tensor([1, 2, 3]) << 2).tolist(), (Tensor([-8, 9]) >> 1).tolist()), ([4, 8, 12], [-4, 4])),
  "reshape shape=": (Tensor.arange(6).reshape(shape=(2, 3)).tolist(), [[0, 1, 2], [3, 4, 5]]),
  "view shape=": (Tensor.arange(6).view(shape=(3, 2)).shape, (3, 2)),
  "expand shape=": (Tensor([1, 2]).expand(shape=(2, 2)).tolist(), [[1, 2], [1, 2]]),
  "permute order=": (t.permute(order=(1, 0)).shape, (4, 3)),
  "flip axis=": (t.flip(axis=1).tolist()[0], [4.0, 3.0, 2.0, 1.0]),
  "avg_pool2d ceil_mode": (p.avg_pool2d(kernel_size=(2, 2), ceil_mode=True).tolist(),
                           [[[[3.0, 5.0, 6.5], [13.0, 15.0, 16.5], [20.5, 22.5, 24.0]]]]),
  "avg_pool2d count_include_pad": (p.avg_pool2d(kernel_size=(3, 3), stride=2, padding=1, count_include_pad=False).tolist(),
                                   [[[[3.0, 4.5, 6.0], [10.5, 12.0, 13.5], [18.0, 19.5, 21.0]]]]),
  "avg_pool2d both": (p.avg_pool2d(kernel_size=(2, 2), padding=1, ceil_mode=True, count_include_pad=False).tolist(),
                      [[[[0.0, 1.5, 3.5], [7.5, 9.0, 11.0], [17.5, 19.0, 21.0]]]]),
  "avg_pool2d ceil pad": (p.avg_pool2d(kernel_size=(3, 3), stride=2, padding=1, ceil_mode=True).tolist(),
                          [[[[1.3333333730697632, 3.0, 2.6666667461395264], [7.0, 12.0, 9.0], [8.0, 13.0, 9.333333015441895]]]]),
  "max_pool2d ceil_mode": (p.max_pool2d(ceil_mode=True).tolist(), [[[[6.0, 8.0, 9.0], [16.0, 18.0, 19.0], [21.0, 23.0, 24.0]]]]),
  "max_pool2d return_indices": (p.max_pool2d(kernel_size=(2, 2), stride=1, return_indices=True)[1].tolist(),
                                [[[[6, 7, 8, 9], [11, 12, 13, 14], [16, 17, 18, 19], [21, 22, 23, 24]]]]),
  "max_pool2d indices": ([r.tolist() for r in (-p).max_pool2d(return_indices=True)], [[[[[0.0, -2.0], [-10.0, -12.0]]]], [[[[0, 2], [10, 12]]]]]),
  "conv2d dtype": ((str(p.conv2d(Tensor.ones(1, 1, 2, 2), dtype=dtypes.float16).dtype),
                    p.conv2d(Tensor.ones(1, 1, 2, 2), padding=1, dtype=dtypes.float32).tolist()[0][0][0]),
                   ("dtypes.half", [0.0, 1.0, 3.0, 5.0, 7.0, 4.0])),
  "linear dtype": ((str(Tensor([[1, 2], [3, 4]]).linear(Tensor([[1, 2], [3, 4]]), Tensor([1, 2]), dtype=dtypes.float).dtype),
                    Tensor([[1, 2], [3, 4]]).linear(Tensor([[1, 2], [3, 4]]), Tensor([1, 2]), dtype=dtypes.float).tolist()),
                   ("dtypes.float", [[8.0, 12.0], [16.0, 24.0]])),
  "shard one device": ((Tensor([1.0, 2.0]).shard(("CPU",)).tolist(), Tensor([1.0, 2.0]).shard(("CPU",)).device), ([1.0, 2.0], "CPU")),
  "realize do_update_stats": ((Tensor([1.0]) + 1).realize(do_update_stats=False).tolist(), [2.0]),
})
s = Tensor([1.0, 2.0]).realize()
checks["shard_ in place"] = ((s.shard_(("CPU",)) is s, s.tolist()), (True, [1.0, 2.0]))
r = Tensor([1.0, 2.0])
checks["replace x="] = ((r.replace(x=Tensor([3.0, 4.0])) is r, r.tolist()), (True, [3.0, 4.0]))
try: Tensor([1.0, 2.0]).replace(Tensor([1.0]))
except Exception as e: checks["replace names the shapes"] = ("(2,) != (1,)" in str(e), True)
buf = (ctypes.c_float * 4)(1.5, 2.0, 3.0, 4.0)
checks["from_blob"] = (Tensor.from_blob(ctypes.addressof(buf), (2, 2), dtype=dtypes.float32).tolist(), [[1.5, 2.0], [3.0, 4.0]])
ibuf = (ctypes.c_int32 * 3)(7, -1, 9)
b2 = Tensor.from_blob(ctypes.addressof(ibuf), (3,), dtype=dtypes.int32)
checks["from_blob int"] = (((b2 + 1).tolist(), str(b2.dtype)), ([8, 0, 10], "dtypes.int"))
tv = Tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]).realize()
rr = (tv.shrink(((0, Variable("n", 1, 10).bind(3)),)) * 2).sum()
lin, vv = rr.linear_with_vars()
run_linear(lin, vv); a1 = rr.item()
run_linear(lin, {"n": 5}); a2 = rr.item()
checks["linear_with_vars"] = ((vv, str(lin.op), len(lin.src), a1, a2), ({"n": 3}, "Ops.LINEAR", 1, 12.0, 30.0))
# from_url over a local HTTP server (tinygrad's values: uint8 bytes; tinygrad's tensor sits on its DISK cache, ours on the default device)
here = os.path.dirname(os.path.abspath(__file__))
class QuietHandler(http.server.SimpleHTTPRequestHandler):
  def log_message(self, *args): pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=here))
threading.Thread(target=srv.serve_forever, daemon=True).start()
u = Tensor.from_url(f"http://127.0.0.1:{srv.server_address[1]}/from_url.bin")
checks["from_url"] = ((str(u.dtype), u.shape, u.tolist(), (u.to("CPU") + 1).tolist()), ("dtypes.uchar", (4,), [1, 2, 3, 255], [2, 3, 4, 0]))
ug = Tensor.from_url(f"http://127.0.0.1:{srv.server_address[1]}/from_url.bin.gz", gunzip=True)
checks["from_url gunzip"] = (ug.tolist(), [1, 2, 3, 255])
srv.shutdown()

# ---- every Tensor entry of tinygrad's docs/tensor/{creation,elementwise,movement,ops,properties}.md, with its keyword arguments ----
# tensor_api_reference.json is written from tinygrad by make_tensor_api_reference.py. A bound C++ method's parameters are
# read from the signature pybind11 states in its docstring (the py::arg names it accepts).
KNOWN_MISSING = set()           # doc entries tinyscope does not have yet: this set may only shrink
KNOWN_MISSING_KWARGS = {}       # name -> keyword arguments of tinygrad's signature not accepted yet: may only shrink
def accepted_params(fn):
  try: return {q.name: q.kind.name for q in inspect.signature(fn).parameters.values()}
  except (ValueError, TypeError): pass
  out = {}
  for line in (fn.__doc__ or "").split("\n"):
    if not (m := re.match(r"^(?:\d+\. )?\w+\((.*)\) -> ", line)): continue
    depth, cur, parts = 0, "", []
    for ch in m.group(1) + ",":
      depth += (ch in "([{") - (ch in ")]}")
      if ch == "," and depth == 0: parts, cur = parts + [cur.strip()], ""
      else: cur += ch
    kwonly = False
    for q in filter(None, parts):
      if q in ("*", "*args"): kwonly = True
      if q.startswith("*"):
        if q.startswith("**"): out["kwargs"] = "VAR_KEYWORD"
        continue
      out[q.split(":")[0].split("=")[0].strip()] = "KEYWORD_ONLY" if kwonly else "POSITIONAL_OR_KEYWORD"
  return out
reference = json.load(open(os.path.join(here, "tensor_api_reference.json")))
missing, missing_kwargs = set(), {}
for e in reference:
  if not hasattr(Tensor, e["name"]): missing.add(e["name"]); continue
  if e["kind"] == "property": continue
  ours = accepted_params(getattr(Tensor, e["name"]))
  if "VAR_KEYWORD" in ours.values(): continue
  lack = [n for n, kind in e["params"] if kind in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY") and n not in ours]
  if lack: missing_kwargs[e["name"]] = lack
checks["doc entries"] = (sorted(missing), sorted(KNOWN_MISSING))
checks["doc keyword arguments"] = (missing_kwargs, KNOWN_MISSING_KWARGS)
checks["doc entry count"] = (len(reference), 219)

# ---- fp8: round trips against values worked out by hand from the formats (e4m3: 4 exponent bits, bias 7, 3 mantissa
# bits, no inf; e5m2: bias 15, 2 mantissa bits; fnuz: bias one more, one NaN 0x80, no -0), rounded to nearest even,
# saturating at the largest finite value. (tinygrad's CPU flushes fp8 subnormals to zero in its kernels; here they are kept)
from tinygrad.dtype import float_to_fp8, fp8_to_float, least_upper_dtype
def codes(vals, dt): return Tensor(vals, dtype=dtypes.float32).cast(dt).bitcast(dtypes.uint8).tolist()
inf, nan = float("inf"), float("nan")
e4, e5, e4z, e5z = dtypes.fp8e4m3, dtypes.fp8e5m2, dtypes.fp8e4m3fnuz, dtypes.fp8e5m2fnuz
checks.update({
  "fp8 dtypes": ((repr(e4), e4.name, e4.itemsize, dtypes.fp8s, dtypes.floats[:4], dtypes.finfo(e5)),
                 ("dtypes.fp8e4m3", "float8_e4m3", 1, (e4, e5, e4z, e5z), (e4, e5, e4z, e5z), (5, 2))),
  "fp8 promotion": ((least_upper_dtype(e4, e5), least_upper_dtype(e4, dtypes.bfloat16), (Tensor([1.0], dtype=e4) + 1.0).dtype,
                     (Tensor([1.0], dtype=e4) * Tensor([2.0])).dtype), (dtypes.half, dtypes.bfloat16, e4, dtypes.float)),
  # 0.3 = 1.2*2^-2 -> 1.25*2^-2; 1.1 -> 1.125; 1.0625 is a tie -> 1.0 (even); 1.1875 a tie -> 1.25; 500 saturates;
  # 1e-3 is 0.512 of the smallest subnormal 2^-9
  "fp8e4m3 host round trip": (Tensor([0.3, -1.1, 1.0625, 1.1875, 500.0, -500.0, 1e-3, -0.0], dtype=e4).tolist(),
                              [0.3125, -1.125, 1.0, 1.25, 448.0, -448.0, 0.001953125, -0.0]),
  "fp8e4m3 kernel round trip": (Tensor([0.3, -1.1, 1.0625, 1.1875, 500.0, -500.0, 1e-3]).cast(e4).cast(dtypes.float32).tolist(),
                                [0.3125, -1.125, 1.0, 1.25, 448.0, -448.0, 0.001953125]),
  # inf and NaN are the NaN codes 0x7f/0xff; 1.0 is 0x38; the largest 448 is 0x7e, the smallest subnormal 0x01
  "fp8e4m3 codes": (codes([inf, -inf, nan, 1.0, 448.0, 2**-9, 2**-10], e4), [0x7f, 0xff, 0x7f, 0x38, 0x7e, 0x01, 0x00]),
  # 1e5 saturates at 57344 (0x7b), inf stays inf (0x7c), NaN is 0x7f; 1e-5 is 0.655 of the smallest subnormal 2^-16
  "fp8e5m2 round trip": (Tensor([0.3, 1e5, 1e-5, 3.0]).cast(e5).cast(dtypes.float32).tolist(), [0.3125, 57344.0, 2**-16, 3.0]),
  "fp8e5m2 codes": (codes([inf, -inf, nan, 57344.0, 1.0], e5), [0x7c, 0xfc, 0x7f, 0x7b, 0x3c]),
  # fnuz: the largest e4m3fnuz is 240 (0x7f); NaN and inf are 0x80; -0.0 is 0; 1.0 is 0x40 (bias 8)
  "fp8e4m3fnuz codes": (codes([300.0, -300.0, inf, nan, -0.0, 1.0], e4z), [0x7f, 0xff, 0x80, 0x80, 0x00, 0x40]),
  "fp8e5m2fnuz codes": (codes([1e6, inf, -1e-9, 1.0, 2**-17], e5z), [0x7f, 0x80, 0x00, 0x40, 0x01]),
  "fp8 conversions": ((float_to_fp8(448.0, e4), float_to_fp8(464.0, e4), float_to_fp8(-inf, e5), fp8_to_float(0x7e, e4),
                       fp8_to_float(0x01, e4), fp8_to_float(0x80, e4), fp8_to_float(0x7b, e5), fp8_to_float(0xfc, e5)),
                      (0x7e, 0x7e, 0xfc, 448.0, 2**-9, -0.0, 57344.0, -inf)),
  "fp8 NaN": (([v != v for v in Tensor([0x7f, 0xff, 0x80], dtype=dtypes.uint8).bitcast(e4).tolist()],
               fp8_to_float(0x80, e4z) != fp8_to_float(0x80, e4z), fp8_to_float(0x7d, e5) != fp8_to_float(0x7d, e5)),
              ([True, True, False], True, True)),
  # 1.5 + 0.3125 = 1.8125, a tie between 1.75 and 1.875 -> 1.75 (even); 1.5 * 1.5 = 2.25 exactly
  "fp8 math": (((Tensor([1.5], dtype=e4) + Tensor([0.3125], dtype=e4)).tolist(), (Tensor([1.5], dtype=e4) * 1.5).tolist(),
                Tensor([1.0, 2.0, 3.0], dtype=e4).sum().tolist(), str(Tensor([1.0], dtype=e4).sum().dtype),
                Tensor([3.75, -2.5], dtype=e4).cast(dtypes.int32).tolist()), ([1.75], [2.25], 6.0, "dtypes.fp8e4m3", [3, -2])),
  # e5m2: 1.1 -> 1.0, 300 = 1.17*2^8 -> 1.25*2^8 = 320 (an e4m3 value too); 57344 saturates e4m3 at 448
  "fp8 cast between formats": (Tensor([1.1, 300.0, 57344.0], dtype=e5).cast(e4).tolist(), [1.0, 320.0, 448.0]),
  "fp8 numpy": ((Tensor([0.3], dtype=e4).numpy().dtype.name, Tensor([0.3], dtype=e4).numpy().tolist()), ("float32", [0.3125])),
})

bad = {k: v for k, v in checks.items() if v[0] != v[1]}
for k, (got, want) in bad.items(): print(f"MISMATCH {k}: got {got!r}, tinygrad {want!r}")
assert not bad, f"{len(bad)} mismatches"
print("python api ok")
