# int64 and bool tensors: arithmetic, comparison and sum of a bool mask
from tinygrad import Tensor, dtypes
a = Tensor([1, 2, 3, 4], dtype=dtypes.int64)
m = a > 2
RESULT = {"a2": (a * a).tolist(), "mask": m.tolist(), "count": m.sum().item(), "dt": [str(a.dtype), str(m.sum().dtype)]}
print(RESULT)
