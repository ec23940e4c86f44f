# Divisors and shift counts that are only known at run time behave as the constant ones the reference computes
# (int_div_by_zero.py, casts_and_shifts.py): x//0 = x%0 = 0, MIN//-1 = MIN. (The reference's CPU device traps here:
# x86 idiv faults on a zero divisor and on MIN/-1 in 32/64 bits.)
from tinygrad import Tensor, dtypes
for dt in [dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64]:
  a = Tensor([7, 9 if dtypes.is_unsigned(dt) else -7, 0], dtype=dt)
  z = Tensor([0, 0, 0], dtype=dt)
  assert (a // z).tolist() == (a // 0).tolist() == [0, 0, 0], (dt, (a // z).tolist())
  assert (a % z).tolist() == (a % 0).tolist() == [0, 0, 0], (dt, (a % z).tolist())
for dt, lo in [(dtypes.int32, -2**31), (dtypes.int64, -2**63)]:
  a, m = Tensor([lo, 5, -5], dtype=dt), Tensor([-1, -1, -1], dtype=dt)
  assert (a // m).tolist() == (a // -1).tolist() == [lo, -5, 5], (dt, (a // m).tolist())
  assert (a % m).tolist() == (a % -1).tolist() == [0, 0, 0], (dt, (a % m).tolist())
a = Tensor([1, 3, -5, 7], dtype=dtypes.int32)
for k in [0, 1, 31, 32, 33, 40, -1]:
  s = Tensor([k] * 4, dtype=dtypes.int32)
  want_l = [0] * 4 if not 0 <= k < 32 else [((x << k) + 2**31) % 2**32 - 2**31 for x in [1, 3, -5, 7]]
  want_r = [x >> 31 for x in [1, 3, -5, 7]] if not 0 <= k < 32 else [x >> k for x in [1, 3, -5, 7]]
  assert (a << s).tolist() == want_l, (k, (a << s).tolist())
  assert (a >> s).tolist() == want_r, (k, (a >> s).tolist())
# a constant outside its dtype's range holds the wrapped value in the kernel, as a cast of it does (the rendered C
# casts it: int16 -2147483648 is 0, so the division is by 0)
assert (Tensor([-5, 7, 0, 32766, -32767], dtype=dtypes.int16) // -2147483648).tolist() == [0, 0, 0, 0, 0]
print("ok")
