# Casts and shifts as the reference's CPU device computes them on x86-64: float->int out of range or NaN gives
# INT_MIN for int32/int64, 8/16-bit ints go through int32 (low bits), uint32/uint64 saturate to all ones;
# shift counts past the width give 0 (or the sign fill for a signed >>).
from tinygrad import Tensor, dtypes
print(Tensor([-2.0, -1.0, 300.0, 2.5]).cast(dtypes.uint8).tolist())
print(Tensor([3e9, -3e9, float('nan'), float('inf')]).cast(dtypes.int32).tolist())
print(Tensor([float('inf'), -float('inf'), float('nan'), 1e19]).cast(dtypes.int64).tolist())
vals = [-2.0, -1.0, 300.0, 2.5, -2.5, 3e9, -3e9, float('nan'), float('inf'), -float('inf'), 1e19, -0.5, 65539.0,
        2147483648.0, 4294967301.0, 9.3e18, 1.9e19, 4e19, -1e19, 128.0, -129.0, 40000.0, -40000.0]
src = Tensor(vals).realize()
for dt in [dtypes.bool, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64]:
  print(dt, src.cast(dt).tolist())
h = Tensor(vals, dtype=dtypes.float16).realize()
for dt in [dtypes.int8, dtypes.uint8, dtypes.int32, dtypes.uint32, dtypes.int64]:
  print("half", dt, h.cast(dt).tolist())
print(Tensor([1.5, 2.25, -3.0]).cast(dtypes.bfloat16).add(1).tolist())
print(Tensor([1.5, 2.25, -3.0, 1e-3, 3.0e38]).cast(dtypes.bfloat16).mul(3).add(1).tolist())
print((Tensor([1], dtype=dtypes.int32) << 40).tolist())
a, s = Tensor([1, 3, -5, 7], dtype=dtypes.int32), Tensor([1, 31, 32, 40], dtype=dtypes.int32)
print((a << s).tolist(), (a >> s).tolist())
b, t = Tensor([1, 3, 250, 7], dtype=dtypes.uint8), Tensor([1, 7, 8, 12], dtype=dtypes.uint8)
print((b << t).tolist(), (b >> t).tolist())
c, u = Tensor([1, 3, -5, 7], dtype=dtypes.int64), Tensor([1, 63, 64, 70], dtype=dtypes.int64)
print((c << u).tolist(), (c >> u).tolist())
print((a << 3).tolist(), (a >> 1).tolist())
# a pad value (a python int) read through a bitcast has the padded tensor's size
print(Tensor([1, -2, 3], dtype=dtypes.int16).pad(((1, 1),), value=-7).bitcast(dtypes.uint16).tolist())
print(Tensor([1.5, -2.0], dtype=dtypes.float32).pad(((0, 2),), value=-2.5).bitcast(dtypes.uint32).tolist())
