# true division is one correctly rounded division (a * (1/b) would round twice: 15 * (1/14) is one ulp above 15/14)
from tinygrad import Tensor, dtypes
print((Tensor([15.0, 1.0, -7.0, 100.0]) / Tensor([14.0, 3.0, 3.0, 7.0])).tolist())
a = Tensor([9, 6, 8, -9, -4, 7, -8, -2], dtype=dtypes.int8).reshape(2, 4)
print((a.cumsum(0) / a).tolist(), (a / 3).tolist(), (Tensor([1.0, 2.0], dtype=dtypes.float16) / 3).tolist())
