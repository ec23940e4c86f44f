# arguments the reference rejects are rejected here too, with the reference's exception type
import math
from tinygrad import Tensor, dtypes
cases = [("full nan int32", lambda: Tensor.full((2,), math.nan, dtype=dtypes.int32).tolist(), ValueError),
         ("sum axis=(0, 0)", lambda: Tensor([1.0, 2.0]).sum(axis=(0, 0)).tolist(), RuntimeError),
         ("one_hot(-1)", lambda: Tensor([1, 2]).one_hot(-1).tolist(), ValueError),
         ("float & float", lambda: (Tensor([1.0, 2.0]) & Tensor([1.0, 2.0])).tolist(), RuntimeError)]
for name, f, exc in cases:
  try:
    f()
    print(name, "no error")
  except exc:
    print(name, exc.__name__)
