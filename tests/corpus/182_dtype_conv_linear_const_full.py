# conv2d and linear with dtype=, full(buffer=False) and full_like(buffer=False) as broadcast consts, reshape(shape=)/permute(order=) by keyword
from tinygrad import Tensor, dtypes
x = Tensor([float(i % 5) for i in range(32)]).reshape(1, 2, 4, 4).realize()
w = Tensor([float(i % 3) for i in range(36)]).reshape(2, 2, 3, 3).realize()
c = x.conv2d(w, padding=1, dtype=dtypes.float16)
l = Tensor([[1, 2], [3, 4]]).linear(Tensor([[1, 2], [3, 4]]), Tensor([1, 2]), dtype=dtypes.float)
k = x + Tensor.full((1, 2, 4, 4), 0.5, buffer=False)
j = x.full_like(2.0, buffer=False) * x.reshape(shape=(1, 2, 4, 4)).permute(order=(0, 1, 3, 2))
RESULT = {"conv": c.tolist(), "conv_dtype": str(c.dtype), "linear": l.tolist(), "k": k.sum().item(), "j": j.tolist()}
print(RESULT)
