# layernorm by hand: mean, centered variance, normalize
from tinygrad import Tensor
x = Tensor([[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 6.0], [-1.0, 0.0, 1.0, 8.0]]).realize()
m = x.mean(axis=-1, keepdim=True)
v = ((x - m) ** 2).mean(axis=-1, keepdim=True)
y = (x - m) / (v + 1e-5).sqrt()
RESULT = y.tolist()
print(RESULT)
