# half precision: compute in half, tolist casts to float32 first (an extra kernel)
from tinygrad import Tensor, dtypes
x = Tensor([1.5, 2.25, -3.0, 0.125], dtype=dtypes.half)
y = (x * 2 + 1)
RESULT = {"y": y.tolist(), "dtype": str(y.dtype)}
print(RESULT)
