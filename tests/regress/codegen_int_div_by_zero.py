# Integer division and remainder by 0 and of MIN by -1 (constant divisors: the reference's CPU stores 0 for x//0
# and x%0; MIN//-1 wraps to MIN).
from tinygrad import Tensor, dtypes
print((Tensor([7, -7, 0]) // 0).tolist(), (Tensor([7, -7, 0]) % 0).tolist())
for dt in [dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64]:
  a = Tensor([7, 9 if dtypes.is_unsigned(dt) else -7, 0], dtype=dt)
  print(dt, (a // 0).tolist(), (a % 0).tolist())
for dt, lo in [(dtypes.int8, -128), (dtypes.int32, -2**31), (dtypes.int64, -2**63)]:
  a = Tensor([lo, 5, -5], dtype=dt)
  print(dt, (a // -1).tolist(), (a % -1).tolist())
# int8 divides in int: a runtime -1 does not trap there
a, m = Tensor([-128, 5, -5], dtype=dtypes.int8), Tensor([-1, -1, -1], dtype=dtypes.int8)
print((a // m).tolist(), (a % m).tolist())
a, b = Tensor([7, -7, 7, -7, 0], dtype=dtypes.int32), Tensor([2, 2, -2, -2, 3], dtype=dtypes.int32)
print((a // b).tolist(), (a % b).tolist())
