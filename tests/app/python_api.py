# tinygrad's Python API on tinyscope: every expected value below is what tinygrad a9069c1 printed (DEV=CPU).
# Run by tests/app/test_cli.cpp; prints "python api ok" when every check holds.
from tinygrad import Tensor, dtypes
from tinygrad.uop.ops import Ops

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

bad = {k: v for k, v in checks.items() if v[0] != v[1]}
for k, (got, want) in bad.items(): print(f"MISMATCH {k}: got {got!r}, tinygrad {want!r}")
assert not bad, f"{len(bad)} mismatches"
print("python api ok")
