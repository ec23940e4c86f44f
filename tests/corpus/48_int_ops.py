# integer arithmetic: floordiv, mod, max, comparisons, casts
from tinygrad import Tensor, dtypes
a = Tensor([7, -7, 9, 0, 15])
b = Tensor([2, 3, -4, 5, 4])
RESULT = {"floordiv": (a // b).tolist(), "mod": (a % b).tolist(), "max": a.maximum(b).tolist(),
          "lt": (a < b).tolist(), "cast": a.cast(dtypes.float32).tolist(), "mul": (a * 3 + 1).tolist()}
print(RESULT)
