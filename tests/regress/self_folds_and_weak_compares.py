# The reference's self folds and its comparisons with a weak constant outside the other side's dtype range:
# x//x -> 1 and x%x -> 0 of ints (0 too), and u < -4 decided for an unsigned u (the constant keeps its mathematical
# value). (Its x*(1/x) -> 1 is not done here: tinyscope computes f / f and a padded p / p, as the reference does across
# a copy or a realize.)
from tinygrad import Tensor, dtypes
i = Tensor([0, 3, -7], dtype=dtypes.int32)
print((i // i).tolist(), (i % i).tolist())
for dt in [dtypes.uint8, dtypes.uint32, dtypes.uint64]:
  u = Tensor([19, 3, 0], dtype=dt)
  print(dt, (u < -4).tolist(), (u > -4).tolist(), (u != -4).tolist(), (u == -4).tolist(), (u < -4).where(u, 7).tolist())
  print((u.min(axis=0, keepdim=True) < -7).where(1, 2).tolist())
p = Tensor([2, 0, 9, 4, 0, 1, 5, 6, 0, 0, 3, 3], dtype=dtypes.int32).reshape(3, 4)
print((p.pad(((1, 1), (0, 0)), value=3) // p.pad(((1, 1), (0, 0)), value=3)).tolist())
