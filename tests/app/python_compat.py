# numpy interop and the behaviour tinygrad's own tests found different, one check each: every expected value below
# is what tinygrad a9069c1 printed for the same lines on DEV=CPU (Debian's numpy 1.24). Run by tests/app/test_cli.cpp on
# each device; prints "python compat ok" when every check holds.
import pickle
import numpy as np
from tinygrad import Tensor, dtypes
from tinygrad.dtype import _to_np_dtype, _from_np_dtype

def err(f):
  try: f(); return "no error"
  except Exception as e: return [c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"][0]

out = {}
a = np.arange(6, dtype=np.int16).reshape(2, 3).T
out["ndarray strided"] = [str(Tensor(a).dtype), list(Tensor(a).shape), Tensor(a).numpy().tolist()]
out["ndarray 0-d"] = [str(Tensor(np.array(3.5, dtype=np.float16)).dtype), float(Tensor(np.array(3.5, dtype=np.float16)).numpy())]
out["ndarray empty"] = list(Tensor(np.zeros((0, 3), np.uint8)).numpy().shape)
out["ndarray to bf16"] = str(Tensor(np.array([1, 2], np.float64), dtype=dtypes.bfloat16).numpy().dtype)
out["numpy dtypes"] = [str(Tensor([True]).numpy().dtype), str(Tensor([1, 2], dtype=dtypes.half).numpy().dtype), str(Tensor([1, 2]).numpy().dtype), str(Tensor(3.5).numpy().dtype)]
out["complex array"] = err(lambda: Tensor(np.array([1 + 2j])))
x = np.array([1, 2, 3], np.float32); t = Tensor(x); x[0] = 100
out["array read at realize"] = t.numpy().tolist()
n = Tensor([1., 2.]).numpy(); n[0] = 5
out["numpy writable"] = n.tolist()
out["uint64 2**63"] = int(Tensor(np.array([2**63], np.uint64)).numpy()[0])
out["np dtype maps"] = [str(_from_np_dtype(np.float16)), str(_from_np_dtype(np.int64)), _to_np_dtype(dtypes.float32).__name__, _to_np_dtype(dtypes.bfloat16).__name__]
out["uint64 and"] = int((Tensor(2**64 - 1, dtype=dtypes.uint64) & 0xFFFFFFFF).numpy())
out["uint64 trunc div"] = int(Tensor(2**64 - 1, dtype=dtypes.uint64).div(1, rounding_mode="trunc").numpy())
out["int64 exact"] = Tensor(2**62 + 1, dtype=dtypes.int64).item()
out["errors"] = [err(f) for f in [lambda: Tensor(3.14).cat(Tensor(3.14)), lambda: Tensor.ones(3, 4).sum(5), lambda: Tensor.ones(3).squeeze(4),
  lambda: Tensor(1.0).squeeze(1), lambda: Tensor.arange(129, dtype=dtypes.int8), lambda: Tensor([1., 2.]).prod(dtype=""),
  lambda: Tensor.stack(Tensor.ones(4, 3), dim=77), lambda: Tensor.ones(10, 11)[[True, False]], lambda: Tensor.ones(10, 11)[[1.1]],
  lambda: Tensor([1.]).clip(None, None), lambda: Tensor([5]).div(Tensor([1]), rounding_mode="typo"), lambda: Tensor([1., 2.]).gradient(Tensor([1.0]))]]
out["stack tuple"] = Tensor.stack((Tensor([1, 2]), Tensor([3, 4])), dim=1).tolist()
out["unfold size 0"] = list(Tensor.arange(27).reshape(3, 3, 3).unfold(1, 0, 8).shape)
out["nested tuple index"] = list(Tensor.arange(24).reshape(2, 3, 4)[(((0,),),)].shape)
xe = Tensor([-300.0, 300.0, 0.0, -0.0])
out["sigmoid grad extremes"] = xe.sigmoid().sum().gradient(xe)[0].tolist()
out["tanh grad extremes"] = xe.tanh().sum().gradient(xe)[0].tolist()
out["abs grad at 0"] = xe.abs().sum().gradient(xe)[0].tolist()
out["softplus extremes"] = [xe.softplus().tolist(), xe.softplus().sum().gradient(xe)[0].tolist()]
xd, yd = Tensor(np.arange(8 * 3 * 4, dtype=np.float32).reshape(8, 3, 4) / 10), Tensor(np.arange(8 * 4 * 5, dtype=np.float32).reshape(8, 4, 5) / 10)
out["batched dot gradient"] = [round(float(g.sum().item()), 2) for g in xd.dot(yd).sum().gradient(xd, yd)]
w = Tensor.uniform(4, low=-1, high=1); w.assign([1., 2., 3., 4.])
out["assign list to unrealized"] = (w + 1).tolist()
out["pickle"] = pickle.loads(pickle.dumps(Tensor([[1, 2], [3, 4]]))).tolist()
out["normalize"] = [round(v, 6) for v in Tensor([[3.0, 4.0]]).normalize(dim=1).tolist()[0]]
out["pad_to value"] = Tensor([1, 2]).pad_to(4, value=9).tolist()
g = Tensor([1.0, 2.0]); g.grad = Tensor([0.5, 0.5])
out["clone keeps grad"] = g.clone().grad.tolist()
ha, hb = Tensor(np.full((1, 3000), 1.0 / 3, np.float16)), Tensor(np.full((3000, 1), 3.0, np.float16))
out["half matmul accumulates in float"] = [round(float(ha.matmul(hb, dtype=dtypes.float).numpy()[0, 0]), 2), float(ha.matmul(hb).numpy()[0, 0])]
s = Tensor.zeros(3, 4).contiguous().realize()
s[Tensor([0, 2]), Tensor([1, 3])] = Tensor([7.0, 8.0]); s[:, [0, 0]] = Tensor([[1.0, 2.0]]); s[Tensor([1, 1]), 2] = Tensor([5.0, 6.0])
out["setitem tensor indices"] = s.tolist()
xg = Tensor([3.0]); (xg * 2)[0].backward(); g0 = xg.grad; (xg * 3)[0].backward()
out["grad accumulates in place"] = [xg.grad is g0, xg.grad.tolist()]
xo = Tensor([1.0, 2.0]).realize(); pending = (xo * 2).sum()
def set0(): xo[0] = 5.0
out["setitem with other uses"] = err(set0)
c1 = Tensor([1.0, 2.0, 3.0]).realize()
c1.to("CPU:1").square().sum().backward()
out["second cpu"] = [c1.to("CPU:1").device, (c1.to("CPU:1") + 1).to(c1.device).tolist(), c1.grad.device == c1.device, c1.grad.tolist(), err(lambda: (c1.to("CPU:1") + c1).realize())]
out["int unary ops in float"] = [[str(getattr(Tensor([2, 4], dtype=dtypes.int8), f)().dtype) for f in ("exp2", "log2", "reciprocal", "sqrt")],
                                  Tensor([2, 4], dtype=dtypes.uint8).log2().tolist(), Tensor([True, False]).exp2().tolist()]
out["half var sums in float"] = [float(Tensor([[0.0, 1.0]], dtype=dtypes.half).expand(35000, 2).contiguous().var().numpy()),
                                 str(Tensor([[0.0, 1.0]], dtype=dtypes.half).var().dtype)]
out["bitcast to its own dtype"] = [Tensor([1.5, -2.0]).bitcast(dtypes.float32).tolist(), err(lambda: Tensor(1.5).bitcast(dtypes.float32))]
from tinygrad.helpers import Context
with Context(DEFAULT_FLOAT=dtypes.half, DEFAULT_INT=dtypes.int16):
  inside = [str(dtypes.default_float), str(Tensor([1.5]).dtype), str(Tensor([1, 2]).dtype), str(Tensor.arange(3).dtype), str((Tensor([1, 2]) / 2).dtype)]
out["default dtypes in a context"] = inside + [str(dtypes.default_float), str(Tensor([1.5]).dtype)]
w1c = Tensor(3.5).clone(); w1c.add(Tensor(3.5).clone()).backward()
def delete(): del w1c[0]
out["api edges"] = [err(lambda: Tensor.zeros((2, 2), 2)), err(lambda: Tensor.ones((2, 2), (2, 2))), err(lambda: Tensor([3], dtype=(dtypes.int,))),
                    str(w1c.dtype), w1c.grad.tolist(), err(delete), [w1c[...] is w1c, w1c[None] is w1c],
                    err(lambda: Tensor([[1.0, 2.0]]).gather(1, Tensor([[True, False]]))), err(lambda: Tensor([[1.0, 2.0]]).gather(0, Tensor([1])))]
import array
from tinygrad.helpers import mv_address
sv = []
t = Tensor.zeros((3, 3)).contiguous().realize(); t.detach()[1, 2] = 5; sv.append(t[1, 2].item())
t = Tensor.zeros((2, 3)).contiguous().realize(); t.T[1, 0] = 5; sv.append(t[0, 1].item())
t = Tensor.zeros((3,)).contiguous().realize(); t[::-1][0] = 5; sv.append(t.tolist())
t = Tensor.zeros((2, 2)).contiguous().realize(); t[1][0] = 5; sv.append(t.tolist())
t = Tensor.arange(6, dtype=dtypes.float).reshape(3, 2).clone().realize(); tmp = t[0]; t[0] = t[1]; t[2] = tmp; sv.append(t.tolist())
t = Tensor.zeros(6).contiguous().realize(); t[1:5:2] = Tensor([7.0, 8.0]); sv.append(t.tolist())
z = Tensor.zeros(4); xz = Tensor.ones(2).contiguous(); z[:2] = xz; z.sum().backward(); sv.append(xz.grad.tolist())
out["setitem through views"] = sv
blob = memoryview(bytearray(16)).cast('I')
tb = Tensor.from_blob(mv_address(blob), (4,), dtype=dtypes.int, device="CPU")
first = (tb + 1).tolist(); blob[:] = array.array('I', [0, 1, 2, 3])
out["from_blob reads the memory at realize"] = [first, (tb + 1).tolist(), err(lambda: Tensor.from_blob(mv_address(blob), (4,), dtype=dtypes.int, device="CPU:1"))]
da = Tensor.ones(4).contiguous().realize(); da += 1; da += 1
dm = Tensor.zeros(2).contiguous().realize()
out["assigns"] = [da.tolist(), err(lambda: dm.assign(Tensor([1, 2], dtype=dtypes.int32))), dm.assign(2).tolist()]
from tinygrad import Variable
from tinygrad.uop.ops import sym_infer
sv_v = Variable("v", 11, 100)
out["sym_infer"] = [sym_infer(sv_v.bind(79), {"v": 50}), sym_infer(sv_v, {"v": 12}), sym_infer(3, {}), err(lambda: sym_infer(sv_v, {}))]

# multi-device tensors over CPU:1 and CPU:2: where each op's shards go, and the values gathered back
md = ("CPU:1", "CPU:2")
ma = Tensor(np.arange(16, dtype=np.float32).reshape(4, 4)).realize()
m0, m1 = ma.shard(md, axis=0), ma.shard(md, axis=1)
out["shard axes"] = [list(m0.device), m0.uop.axis, m0.sum().uop.axis, m0.sum(1).uop.axis, m0.T.uop.axis, m0.reshape(2, 2, 4).uop.axis,
  m0.reshape(16).uop.axis, m0.pad(((0, 0), (1, 1))).uop.axis, m0[2:4].uop.axis, m0.flip(1).uop.axis, (m0 @ m1).uop.axis, ma.shard(md).uop.axis]
out["shard values"] = [m0.sum().item(), m0.sum(0).tolist(), m1.sum(1).tolist(), (m0 + m1)[1].tolist(), m0[2:4].tolist(), (m0 @ m1)[3].tolist(),
  m0.max().item(), m0.to("CPU").device, m1.to("CPU")[:, 3].tolist(), list(Tensor.ones(2, device=md).device)]
mg = Tensor(np.arange(8, dtype=np.float32).reshape(2, 4)).shard(md, axis=1)
mg.requires_grad = True
(mg * mg).sum().backward()
mgrad = [mg.grad.uop.axis, mg.grad.tolist()]
mg.assign(mg + 1).realize()
out["shard grad and assign"] = mgrad + [mg.tolist(), mg.uop.axis, list(mg.device), Tensor.zeros_like(mg).uop.axis]
mw = Tensor([[1.0, 2.0], [3.0, 4.0]]).shard(md)
mw.requires_grad = True
mx = Tensor([[1.0, 1.0], [2.0, 0.0], [0.0, 3.0], [1.0, 2.0]]).shard(md, axis=0)
(mx @ mw).relu().sum().backward()
out["grad of a copied param, data split"] = [mw.grad.tolist(), mw.grad.uop.axis, list(mw.grad.device)]
out["views of a copy read by kernels"] = [(Tensor(np.arange(4, dtype=np.float32))[2:4].contiguous() * 2).tolist(),
  Tensor(np.arange(16, dtype=np.float32).reshape(4, 4)).shard(md, axis=0).sum().item()]
out["shard errors"] = [err(lambda: m0[1:3].numpy()), err(lambda: m0.flip(0).numpy()), err(lambda: Tensor.ones(5, 4).shard(md, 0).numpy()),
  err(lambda: m0.shard(md)), err(lambda: (m0 + Tensor.ones(4, 4)).numpy())]

# TinyJit: the second call captures, later calls replay with new inputs; what it refuses
from tinygrad import TinyJit
@TinyJit
def jadd(a, b): return (a + b * 2).realize()
jvals = [jadd(Tensor([float(i), 1.0]), Tensor([2.0, float(i)])).tolist() for i in range(4)]
jt, jnone, jint = Tensor([1.0, 2.0]), TinyJit(lambda a: None), TinyJit(lambda a: ((a + 1).realize(), 3))
out["jit replays"] = [jvals, jadd.cnt, len(jadd.captured.linear.src), err(lambda: jadd(jt, jt)),
  err(lambda: [jnone(Tensor([1.0])) for _ in range(3)]), err(lambda: [jint(Tensor([1.0])) for _ in range(3)])]
@TinyJit
def jrand(x): return (x + Tensor.rand(2)).realize()
out["jit rand differs per replay"] = len({tuple(jrand(Tensor([0.0, 0.0])).tolist()) for _ in range(4)})

EXPECTED = {
  "ndarray strided": [
   "dtypes.short",
   [
    3,
    2
   ],
   [
    [
     0,
     3
    ],
    [
     1,
     4
    ],
    [
     2,
     5
    ]
   ]
  ],
  "ndarray 0-d": [
   "dtypes.half",
   3.5
  ],
  "ndarray empty": [
   0,
   3
  ],
  "ndarray to bf16": "float32",
  "numpy dtypes": [
   "bool",
   "float16",
   "int32",
   "float32"
  ],
  "complex array": "KeyError",
  "array read at realize": [
   100.0,
   2.0,
   3.0
  ],
  "numpy writable": [
   5.0,
   2.0
  ],
  "uint64 2**63": 9223372036854775808,
  "np dtype maps": [
   "dtypes.half",
   "dtypes.long",
   "float32",
   "float32"
  ],
  "uint64 and": 4294967295,
  "uint64 trunc div": 18446744073709551615,
  "int64 exact": 4611686018427387905,
  "errors": [
   "IndexError",
   "IndexError",
   "IndexError",
   "IndexError",
   "OverflowError",
   "AttributeError",
   "IndexError",
   "IndexError",
   "IndexError",
   "RuntimeError",
   "RuntimeError",
   "AssertionError"
  ],
  "stack tuple": [
   [
    1,
    3
   ],
   [
    2,
    4
   ]
  ],
  "unfold size 0": [
   3,
   1,
   3,
   0
  ],
  "nested tuple index": [
   1,
   1,
   3,
   4
  ],
  "sigmoid grad extremes": [
   0.0,
   0.0,
   0.25,
   0.25
  ],
  "tanh grad extremes": [
   0.0,
   0.0,
   1.0,
   1.0
  ],
  "abs grad at 0": [
   -1.0,
   1.0,
   0.0,
   0.0
  ],
  "softplus extremes": [
   [
    0.0,
    300.0,
    0.6931471824645996,
    0.6931471824645996
   ],
   [
    0.0,
    1.0,
    0.5,
    0.5
   ]
  ],
  "batched dot gradient": [
   3816.0,
   2280.0
  ],
  "assign list to unrealized": [
   2.0,
   3.0,
   4.0,
   5.0
  ],
  "pickle": [
   [
    1,
    2
   ],
   [
    3,
    4
   ]
  ],
  "normalize": [
   0.6,
   0.8
  ],
  "pad_to value": [
   1,
   2,
   9,
   9
  ],
  "clone keeps grad": [
   0.5,
   0.5
  ]
}
EXPECTED["half matmul accumulates in float"] = [2999.27, 3000.0]
EXPECTED["setitem tensor indices"] = [[2.0, 7.0, 0.0, 0.0], [2.0, 0.0, 6.0, 0.0], [2.0, 0.0, 0.0, 8.0]]
EXPECTED["grad accumulates in place"] = [True, [5.0]]
EXPECTED["setitem with other uses"] = "RuntimeError"
EXPECTED["second cpu"] = ["CPU:1", [2.0, 3.0, 4.0], True, [2.0, 4.0, 6.0], "RuntimeError"]
EXPECTED["int unary ops in float"] = [["dtypes.float", "dtypes.float", "dtypes.float", "dtypes.float"], [1.0, 2.0], [2.0, 1.0]]
EXPECTED["half var sums in float"] = [0.25, "dtypes.half"]
EXPECTED["bitcast to its own dtype"] = [[1.5, -2.0], "RuntimeError"]
EXPECTED["default dtypes in a context"] = ["dtypes.half", "dtypes.half", "dtypes.short", "dtypes.short", "dtypes.half", "dtypes.float", "dtypes.float"]
EXPECTED["api edges"] = ["ValueError", "ValueError", "AttributeError", "dtypes.float", 1.0, "TypeError", [True, False], "RuntimeError", "RuntimeError"]
EXPECTED["setitem through views"] = [5.0, 5.0, [0.0, 0.0, 5.0], [[0.0, 0.0], [5.0, 0.0]], [[2.0, 3.0], [2.0, 3.0], [2.0, 3.0]], [0.0, 7.0, 0.0, 8.0, 0.0, 0.0], [1.0, 1.0]]
EXPECTED["from_blob reads the memory at realize"] = [[1, 1, 1, 1], [1, 2, 3, 4], "no error"]
EXPECTED["assigns"] = [[3.0, 3.0, 3.0, 3.0], "RuntimeError", [2.0, 2.0]]
EXPECTED["sym_infer"] = [50, 12, 3, "TypeError"]
EXPECTED["shard axes"] = [["CPU:1", "CPU:2"], 0, None, 0, 1, 0, 0, 0, None, 0, 1, None]
EXPECTED["shard values"] = [120.0, [24.0, 28.0, 32.0, 36.0], [6.0, 22.0, 38.0, 54.0], [8.0, 10.0, 12.0, 14.0], [[8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0]],
  [344.0, 398.0, 452.0, 506.0], 15.0, "CPU", [3.0, 7.0, 11.0, 15.0], ["CPU:1", "CPU:2"]]
EXPECTED["shard grad and assign"] = [1, [[0.0, 2.0, 4.0, 6.0], [8.0, 10.0, 12.0, 14.0]], [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]], 1, ["CPU:1", "CPU:2"], 1]
EXPECTED["grad of a copied param, data split"] = [[[4.0, 4.0], [6.0, 6.0]], None, ["CPU:1", "CPU:2"]]
EXPECTED["views of a copy read by kernels"] = [[4.0, 6.0], 120.0]
EXPECTED["jit replays"] = [[[4.0, 1.0], [5.0, 3.0], [6.0, 5.0], [7.0, 7.0]], 4, 1, "Exception", "Exception", "Exception"]
EXPECTED["jit rand differs per replay"] = 4
EXPECTED["shard errors"] = ["RuntimeError", "RuntimeError", "RuntimeError", "RuntimeError", "RuntimeError"]

bad = {k: (out.get(k), v) for k, v in EXPECTED.items() if out.get(k) != v}
for k, (got, want) in bad.items(): print(f"MISMATCH {k}: got {got!r}, tinygrad {want!r}")
assert not bad, f"{len(bad)} mismatches"
print("python compat ok")
